/** The whole schema: the builder and every entity file, each imported by name. */
import { builder } from './shared/builder.js';
import { fixedComplexities } from './shared/complexity.js';
import './shared/date-time.js';
import './accounts/user.js';
import './accounts/session.js';
import './rooms/room.js';
import './rooms/message.js';
import './rooms/message-edits.js';
import './rooms/reactions.js';
import './rooms/threads.js';
import './rooms/polls.js';
import './rooms/forwarding.js';
import './rooms/attachments.js';
import './rooms/pins.js';
import './rooms/read-state.js';
import './rooms/moderation.js';
import './rooms/presence.js';
import './rooms/search.js';
import './rooms/room-events.js';
import './messenger/conversation.js';
import './messenger/direct-message.js';
import './messenger/inbox-event.js';
import './messenger/blocking.js';
import './marketplace/money.js';
import './marketplace/item.js';
import './marketplace/purchase.js';

export const schema = fixedComplexities(builder.toSchema({ sortSchema: true }));
