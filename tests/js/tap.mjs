// The node tests' runner: each test's name after "ok - " or "not ok - " (with the error's
// stack), then the exit code (1 when any failed), which tests/test_*_js.py read.

/**
 * Run `tests` (name → function, or [name, function] pairs) one after another, awaiting
 * each, and end the process.
 * @param {Record<string, () => unknown> | Array<[string, () => unknown]>} tests
 */
export async function run(tests) {
  let failed = 0;
  for (const [name, fn] of Array.isArray(tests) ? tests : Object.entries(tests)) {
    try {
      await fn();
      console.log(`ok - ${name}`);
    } catch (e) {
      failed += 1;
      console.log(`not ok - ${name}\n${e instanceof Error ? e.stack : e}`);
    }
  }
  process.exit(failed ? 1 : 0);
}
