/**
 * Uploads that never became part of a message: cut off before their row was
 * written, or never attached within a day. Every upload is listed in
 * unattached_uploads before its first byte is written and unlisted once
 * attached; a job on every instance drops what is still listed a day on: its
 * row by an LWT that a message's attach cannot pass (IF message_id = null),
 * then its bytes, then the entry.
 */
import type { Services } from '../services.js';
import { dayBucket } from '../../buckets.js';
import { timeUuidDate } from '../../timeuuids.js';

/** How long an upload waits to be attached before its bytes go. */
export const UNATTACHED_GRACE_MS = 24 * 3_600_000;
/** Days of entries looked at (one small partition each): a failing job has a week to catch up. */
const DAYS_BACK = 7;

export async function dropUnattachedUploads(services: Services): Promise<number> {
  const { stores, clock } = services;
  const now = clock.now().getTime();
  let dropped = 0;
  for (let back = 0; back <= DAYS_BACK; back++) {
    const day = dayBucket(new Date(now - back * 86_400_000));
    for (const id of await stores.attachments.unattachedOn(day)) {
      if (now - timeUuidDate(id).getTime() < UNATTACHED_GRACE_MS) continue;
      // A message has it (its unlisting was lost): it stays, unlisted. Else its row, bytes and entry go.
      if (await stores.attachments.dropIfUnattached(id)) {
        await stores.fileBytes.drop(id);
        dropped += 1;
      }
      await stores.attachments.unlist(day, id);
    }
  }
  return dropped;
}
