/** Every rule with a duration reads time from one Clock (DESIGN.md "Time is injected"). */
export interface Clock {
  now(): Date;
}

export const systemClock: Clock = { now: () => new Date() };

/** A clock tests move by hand. */
export class FakeClock implements Clock {
  #ms: number;
  constructor(start: Date | string = '2026-06-15T10:00:00.000Z') {
    this.#ms = new Date(start).getTime();
  }
  now(): Date {
    return new Date(this.#ms);
  }
  set(at: Date | string): void {
    this.#ms = new Date(at).getTime();
  }
  advance(ms: number): void {
    this.#ms += ms;
  }
}

export const SECOND = 1000;
export const MINUTE = 60 * SECOND;
export const HOUR = 60 * MINUTE;
export const DAY = 24 * HOUR;
