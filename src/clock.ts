/** Injectable time, so tests can post into past days and months. */
export interface Clock {
  now(): Date;
}

export const systemClock: Clock = { now: () => new Date() };
