// @ts-check
// One POST at a time to the action route; actions offered meanwhile go out the moment
// its answer comes, before the page gets to it (a page busy drawing a rerun would
// otherwise hold the next keys back). After an error the page decides when to retry.
// In a Web Worker when the browser has them (its own thread), else on the page.
// `pipeline` and `post` are copied into the worker as text: they use nothing outside
// themselves but the worker's own globals.
/** @typedef {import("./host.js").Host} Host */

/**
 * An answer of the action route (needlework/actions/route.py), or {error} when none came.
 * @typedef {object} Answer
 * @property {string[]} [acks]
 * @property {{id: string, message?: string}[]} [rejected]
 * @property {{id: string, item?: string, field: string}[]} [undone]
 * @property {{id: string, seq?: number}[]} [moved]
 * @property {{id: string, message: string}[]} [told]
 * @property {string | null} [error]
 * @property {boolean} [sending]  the pipe sent the next actions already
 */

/**
 * @typedef {{offer: (route: string, batch: {id: string}[], force: boolean) => void}} Pipe
 */

/**
 * @param {(route: string, batch: {id: string}[]) => Promise<Answer>} post
 * @param {(data: Answer) => void} deliver
 * @returns {Pipe}
 */
export function pipeline(post, deliver) {
  let busy = false;
  /** @type {{route: string, batch: {id: string}[]} | null} */
  let next = null;
  /**
   * @param {string} route
   * @param {{id: string}[]} batch
   * @param {Set<string>} acked
   */
  const start = (route, batch, acked) => {
    batch = batch.filter((a) => !acked.has(a.id));
    if (!batch.length) return false;
    busy = true;
    post(route, batch).then((data) => {
      busy = false;
      const waiting = next;
      next = null;
      const sending = !!(waiting && !data.error &&
                         start(waiting.route, waiting.batch, new Set(data.acks || [])));
      deliver(Object.assign({}, data, {sending}));
    });
    return true;
  };
  return {
    offer(route, batch, force) {
      if (busy && !force) { next = {route, batch}; return; }
      start(route, batch, new Set());
    },
  };
}

/**
 * One POST of `batch`; `env`: fetch and the timers (the worker's own when left out).
 * @param {string} route
 * @param {{id: string}[]} batch
 * @param {Pick<Host, "fetch" | "setTimeout" | "clearTimeout" | "AbortController">} [env]
 * @returns {Promise<Answer>}
 */
export function post(route, batch, env) {
  // the globals called as functions of their own (a method call on `use` would be an
  // illegal invocation of the browser's fetch and timers)
  const use = env || {
    fetch: (input, init) => fetch(input, init),
    setTimeout: (fn, ms) => setTimeout(fn, ms),
    clearTimeout: (timer) => clearTimeout(timer),
    AbortController: typeof AbortController === "function" ? AbortController : undefined,
  };
  const abort = use.AbortController ? new use.AbortController() : null;
  const timer = use.setTimeout(() => { if (abort) abort.abort(); }, 2500);
  return use.fetch(route, {
    method: "POST", headers: {"Content-Type": "application/json"}, cache: "no-store",
    credentials: "same-origin", body: JSON.stringify({actions: batch}),
    signal: abort ? abort.signal : undefined,
  }).then(async (r) => {
    /** @type {any} */
    let data = {};
    try { data = await r.json(); } catch (e) { data = {}; }
    if (!r.ok) {
      /** @type {Record<number, string>} */
      const said = {401: "signin", 404: "noroute", 413: "failed", 429: "busy"};
      data = {error: said[r.status] || (r.status >= 500 ? "failed" : data.error || "failed")};
    }
    return data;
  }, () => ({error: "offline"})).then((data) => { use.clearTimeout(timer); return data || {}; });
}

/**
 * The Web Worker's code: the pipeline and its POST as text, answers posted back to the page.
 * @returns {string}
 */
export function workerSource() {
  return `const pipeline = ${pipeline.toString()};\nconst post = ${post.toString()};\n` +
    "const pipe = pipeline(post, (data) => postMessage(data));\n" +
    "onmessage = (e) => pipe.offer(e.data.route, e.data.batch, e.data.force);\n";
}

/**
 * The outbox's pipe: answers go to `deliver`.
 * @param {(data: Answer) => void} deliver
 * @param {Host} host
 * @returns {Pipe}
 */
export function makePipe(deliver, host) {
  try {
    const {Worker, location} = host;
    if (Worker && location) {
      const source = workerSource();
      const worker = new Worker(URL.createObjectURL(new Blob([source], {type: "text/javascript"})));
      worker.onmessage = (e) => deliver(e.data || {});
      return {
        offer(route, batch, force) {
          worker.postMessage({route: new URL(route, location.href).href, batch, force});
        },
      };
    }
  } catch (e) { /* no workers here: the page sends */ }
  return pipeline((route, batch) => post(route, batch, host), deliver);
}
