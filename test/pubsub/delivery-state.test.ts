// Whether an instance's events are delivered: the watchers told of each loss, from its earliest known time, and return.
import { describe, expect, it } from 'vitest';
import { pino } from 'pino';
import { DeliveryState } from '../../src/pubsub/delivery-state.js';

function watched() {
  const state = new DeliveryState(pino({ level: 'silent' }));
  const heard: Array<[boolean, number | undefined]> = [];
  state.watch({ onDeliveryChange: (live, since) => heard.push([live, since?.getTime()]) });
  return { state, heard };
}

describe('delivery state', () => {
  it('tells a loss once, and again only from an earlier time than it told', () => {
    const { state, heard } = watched();
    state.set(false, new Date(2_000));
    state.set(false, new Date(3_000));
    state.set(false, new Date(1_000));
    state.set(false);
    state.set(true);
    state.set(true);
    expect(heard).toEqual([
      [false, 2_000],
      [false, 1_000],
      [true, undefined],
    ]);
    expect(state.isLive).toBe(true);
  });

  it("skips a notice of publishes missed within this instance's own interruption, and tells any other", () => {
    const { state, heard } = watched();
    const lostAt = Date.now() - 10_000;
    state.set(false, new Date(lostAt));
    state.set(true);
    heard.length = 0;
    state.eventsMissed(lostAt + 1_000, lostAt + 2_000);
    expect(heard).toEqual([]);
    state.eventsMissed(lostAt - 5_000, lostAt + 2_000);
    expect(heard).toEqual([
      [false, lostAt - 5_000],
      [true, undefined],
    ]);
  });
});
