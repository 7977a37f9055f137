import { builder } from './builder.js';
import './user.js';
import './session.js';
import './room.js';

export const schema = builder.toSchema({ sortSchema: true });
