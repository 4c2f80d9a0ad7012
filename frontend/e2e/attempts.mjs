// Attempts (issue 44, point 3), in the browser: a question asked with "Check with 3 attempts" (the
// switch turned on from the keyboard) runs as three lanes, each with its strategy and its own step
// streaming; then the verdict "3 of 3 attempts agree" stands above the answer, and attempt 2's code
// opens with one click. After a reload the same verdict and attempt 2's code come back (GET run's
// attempts and verdict, the attempts' steps from the run's stored events).
// Imported by run.mjs; `t` holds its helpers. Screenshots (E2E_SHOTS set) at 1440 and 390 px, light and dark.
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { pageApi } from './page-api.mjs';
import { SHOTS_ON } from './shots.mjs';

export const SHOTS = process.env.ATTEMPTS_SHOTS ?? '/work/shots/attempts-web';

// Every attempt's step holds for a while (longer when screenshots are taken, so the lanes can be
// photographed while they run), then answers. The three replies are the same: the scripted model
// hands them out in the order the attempts ask, whatever that order is.
const HOLD_SECONDS = SHOTS_ON ? 30 : 6;
const CODE = ['import time', `time.sleep(${HOLD_SECONDS})`, 'total = 21 * 2', 'print("total:", total)', "final_answer(f'The total is {total}.')"].join('\n');
const QUESTION = 'What is the total? Check it.';

export async function attemptsTests(t) {
  const { page, base, script, test, expect, chooseTheme } = t;
  const api = pageApi(page);
  const runs = () => page.locator('[data-testid=run]');
  const shots = async (name, locate, themes = ['Light', 'Dark']) => {
    if (!SHOTS_ON) return;
    mkdirSync(SHOTS, { recursive: true });
    for (const theme of themes) {
      await page.setViewportSize({ width: 1440, height: 900 });
      await chooseTheme(page, theme);
      for (const [width, height] of [
        [1440, 900],
        [390, 844],
      ]) {
        await page.setViewportSize({ width, height });
        if (locate) await locate().scrollIntoViewIfNeeded();
        await page.waitForTimeout(400);
        await page.screenshot({ path: path.join(SHOTS, `${name}-${width}-${theme.toLowerCase()}.png`) });
      }
    }
    await page.setViewportSize({ width: 1440, height: 900 });
    await chooseTheme(page, 'System');
  };
  let sessionUrl;

  await test('attempts: "Check with 3 attempts" runs three lanes, then the verdict "3 of 3 attempts agree"; attempt 2\'s code is one click away', async () => {
    const project = (await api('POST', '/api/v1/projects', { name: 'Checked answers' })).body;
    const session = (await api('POST', `/api/v1/projects/${project.id}/sessions`, { title: 'Three attempts' })).body;
    sessionUrl = `${base}/projects/${project.id}/sessions/${session.id}`;
    await page.goto(sessionUrl);
    await script([{ thought: 'Add it up.', code: CODE }, { thought: 'Add it up.', code: CODE }, { thought: 'Add it up.', code: CODE }], 0.01);

    // The switch, from the keyboard: it is labelled and takes Space.
    const toggle = page.getByRole('switch', { name: 'Check with 3 attempts' });
    expect((await toggle.getAttribute('aria-checked')) === 'false', 'the switch starts off (the project default is 1)');
    await toggle.focus();
    await page.keyboard.press('Space');
    await page.locator('[data-testid=attempts-switch][aria-checked=true]').waitFor();
    expect((await page.getByRole('combobox', { name: 'Number of attempts' }).inputValue()) === '3', 'three attempts are chosen');
    const box = page.getByRole('textbox', { name: 'Ask a question about your data' });
    await box.fill(QUESTION);
    await box.press('Enter');

    // While they run: three lanes, each with its strategy and its own step's code.
    const run = runs().last();
    const lanes = run.getByTestId('attempt-lane');
    await lanes.nth(2).waitFor({ timeout: 120_000 });
    expect((await lanes.count()) === 3, `three lanes: ${await lanes.count()}`);
    for (let i = 0; i < 3; i++) {
      const title = await lanes.nth(i).getByTestId('attempt-title').innerText();
      expect(new RegExp(`^Attempt ${i + 1} · \\S`).test(title), `lane ${i + 1} names its attempt and strategy: ${title}`);
    }
    await lanes.first().getByTestId('code').filter({ hasText: 'time.sleep' }).first().waitFor({ timeout: 60_000 });
    expect((await run.getByRole('button', { name: 'Stop' }).count()) === 1, 'one Stop for all the attempts');
    await shots('01-lanes', () => run, ['Light']);

    // After: the verdict above the answer.
    const verdict = run.getByTestId('verdict');
    await verdict.waitFor({ timeout: 180_000 });
    await run.and(page.locator('[data-status=succeeded]')).waitFor({ timeout: 60_000 });
    const headline = await verdict.getByTestId('verdict-headline').innerText();
    expect(headline === '3 of 3 attempts agree', `the verdict: ${headline}`);
    expect((await verdict.getAttribute('data-outcome')) === 'agree', 'marked as agreeing');
    const said = ((await verdict.textContent()) ?? '').replace(/\s+/g, ' ').trim();
    expect(said === 'Agree: 3 of 3 attempts agree', `the count said once (the reason repeats it): ${said}`);
    const answer = await run.getByTestId('final-answer').innerText();
    expect(answer.includes('The total is 42.'), `the chosen attempt's answer is the answer: ${answer}`);
    const above = await verdict.evaluate((v, a) => !!(v.compareDocumentPosition(a) & Node.DOCUMENT_POSITION_FOLLOWING), await run.getByTestId('final-answer').elementHandle());
    expect(above, 'the verdict stands above the answer');
    expect((await run.getByTestId('attempt-lane').count()) === 0, 'the lanes give way to the answer');

    // Attempt 2's code, one click away.
    await run.locator('[data-testid=attempt-toggle][data-attempt="2"]').click();
    const panel = run.getByTestId('attempt-panel');
    expect((await panel.getAttribute('data-attempt')) === '2', 'attempt 2 is open');
    const code = await panel.getByTestId('code').first().innerText();
    expect(code.includes('total = 21 * 2'), `attempt 2's code shows: ${code}`);
    expect((await panel.getByTestId('attempt-answer').innerText()).includes('The total is 42.'), "attempt 2's answer shows");
    await shots('02-verdict', () => run);
  });

  await test('attempts: after a reload the verdict and each attempt\'s code come back', async () => {
    await page.goto(sessionUrl);
    const run = runs().last();
    const verdict = run.getByTestId('verdict');
    await verdict.waitFor();
    expect((await verdict.getByTestId('verdict-headline').innerText()) === '3 of 3 attempts agree', 'the same verdict after a reload');
    expect((await run.getByTestId('final-answer').innerText()).includes('The total is 42.'), 'the same answer');
    await run.locator('[data-testid=attempt-toggle][data-attempt="2"]').click();
    const panel = run.getByTestId('attempt-panel');
    await panel.getByTestId('code').filter({ hasText: 'total = 21 * 2' }).first().waitFor();
    // The next question is asked as the switch was left: the switch holds per session view, so a reload starts it off.
    expect((await page.getByRole('switch', { name: 'Check with 3 attempts' }).getAttribute('aria-checked')) === 'false', 'the switch starts off again');
  });
}
