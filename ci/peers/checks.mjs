// The check runner the Node peer checks share (mcp-sdk.mjs, oidc.mjs; the
// assertion also oidc-flow.mjs): each check runs to its end, a failure is
// printed and counted and does not stop the next, and `finish()` prints
// "<label>: N passed, N failed" and exits non-zero on any failure.

export function assert(condition, message) {
  if (!condition) throw new Error(message);
}

export function checks(label) {
  let passed = 0;
  let failed = 0;
  return {
    async check(name, body) {
      try {
        await body();
        passed += 1;
        console.log(`ok   ${name}`);
      } catch (error) {
        failed += 1;
        console.log(`FAIL ${name}: ${error?.message ?? error}`);
      }
    },
    finish() {
      console.log(`${label}: ${passed} passed, ${failed} failed`);
      process.exit(failed === 0 ? 0 : 1);
    },
  };
}
