// @ts-check
// What the outbox and the navigator take from the browser: storage, clock, timers,
// randomness, the network, the address. The page hands them the browser's own
// (browserHost); the node tests (tests/js/outbox_core.test.mjs, navigator_core.test.mjs)
// hand them fakes: a clock they move, storage in a Map, a fetch they answer.

/**
 * @typedef {object} Host
 * @property {() => number} now                   Date.now
 * @property {Storage} localStorage               may throw when storage is off
 * @property {Storage} sessionStorage             likewise
 * @property {(fn: () => void, ms: number) => any} setTimeout
 * @property {(timer: any) => void} clearTimeout
 * @property {(fn: () => void, ms: number) => any} setInterval
 * @property {(words: Uint32Array) => void} random   crypto.getRandomValues
 * @property {typeof fetch} fetch
 * @property {(typeof AbortController) | undefined} AbortController
 * @property {(typeof Worker) | undefined} Worker  none: the page sends the actions itself
 * @property {{activeElement?: Element | null}} document
 * @property {{href: string} | undefined} location
 * @property {{state: unknown, replaceState: History["replaceState"]} | undefined} history
 * @property {(type: string, fn: () => void) => void} onPage  the window's events
 */

/** @returns {Host} the browser's own */
export function browserHost() {
  return {
    now: () => Date.now(),
    get localStorage() { return localStorage; },
    get sessionStorage() { return sessionStorage; },
    setTimeout: (fn, ms) => setTimeout(fn, ms),
    clearTimeout: (timer) => clearTimeout(timer),
    setInterval: (fn, ms) => setInterval(fn, ms),
    random: (words) => { crypto.getRandomValues(words); },
    fetch: (input, init) => fetch(input, init),
    AbortController: typeof AbortController === "function" ? AbortController : undefined,
    Worker: typeof Worker === "function" && typeof Blob === "function" &&
      typeof URL === "function" ? Worker : undefined,
    document,
    location,
    history,
    onPage: (type, fn) => addEventListener(type, fn),
  };
}
