import { builder } from './builder.js';
import './user.js';
import './session.js';
import './inbox-event.js';
import './purchase.js';
import './room.js';

export const schema = builder.toSchema({ sortSchema: true });
