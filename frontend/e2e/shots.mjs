// Screenshots are for developers to look at, not assertions: the browser tests take them only
// when E2E_SHOTS is set (E2E_SHOTS=1 npm run e2e), and then as many as before, at 1440 and
// 390 px, light and dark. Without it a test still does everything it asserts, and the pauses
// that only let a view settle for its picture are skipped; a failing test's screenshot is
// taken either way (run.mjs).
export const SHOTS_ON = Boolean(process.env.E2E_SHOTS);

/** A screenshot of page `p` into `file` (with playwright's other options), when shots are on. */
export const snap = async (p, file, options = {}) => {
  if (SHOTS_ON) await p.screenshot({ path: file, ...options });
};

/** A pause that only lets the view settle for a screenshot: none when shots are off. */
export const settle = async (p, ms) => {
  if (SHOTS_ON) await p.waitForTimeout(ms);
};
