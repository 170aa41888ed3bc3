// The supervisor reads the time (restart windows) and arms timers (shutdown timeouts) only through the
// Clock of src/time, which every other waiting part of the server shares; re-exported here because the
// supervision API has always offered it (`realClock` is `systemClock`'s older name).

export { type Clock, systemClock, systemClock as realClock } from '../time/clock.ts';
export { FakeClock } from '../time/fake-clock.ts';
