// The browser flow of the team's knowledge and the project's checks (issue 41): add an item, the
// agent proposes one (the scripted review pass), approve it, ask, see "Shaped by", run the checks.
// Imported by run.mjs; `t` holds its helpers.
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { pageApi } from './page-api.mjs';
import { snap } from './shots.mjs';

export const SHOTS = process.env.KNOWLEDGE_SHOTS ?? '/work/shots';

export async function knowledgeTests(t) {
  const { page, base, script, test, expect, ask, lastRun } = t;
  mkdirSync(SHOTS, { recursive: true });
  const shot = (name) => snap(page, path.join(SHOTS, `${name}.png`), { fullPage: false });
  const api = pageApi(page);
  const RULE = { title: 'Revenue excludes refunds', body: 'Leave refunded orders out of every revenue figure.' };
  const PROPOSED = { kind: 'definition', title: 'Active customer', body: 'A customer who ordered in the last 90 days.' };
  let project;
  let sessionUrl;

  await test('knowledge: an editor adds an item in the Knowledge panel; its empty state says what knowledge is for', async () => {
    project = (await api('POST', '/api/v1/projects', { name: 'Team knowledge' })).body;
    const session = (await api('POST', `/api/v1/projects/${project.id}/sessions`, { title: 'Customers' })).body;
    sessionUrl = `${base}/projects/${project.id}/sessions/${session.id}`;
    await page.goto(`${base}/projects/${project.id}`);
    await page.getByTestId('knowledge-link').click();
    await page.waitForURL('**/knowledge');
    const empty = await page.getByTestId('knowledge-empty').innerText();
    expect(/what the team wants the agent to know/.test(empty), `the empty state says what knowledge is for: ${empty}`);
    await page.getByRole('button', { name: 'Add item' }).click();
    const dialog = page.getByTestId('item-dialog');
    await dialog.getByLabel('Kind').selectOption('rule');
    await dialog.getByLabel('Title').fill(RULE.title);
    await dialog.getByLabel('What it means').fill(RULE.body);
    await dialog.getByRole('button', { name: 'Add' }).click();
    await dialog.waitFor({ state: 'detached' });
    const item = page.getByTestId('knowledge-item').filter({ hasText: RULE.title });
    expect((await item.getAttribute('data-status')) === 'approved', 'an item an editor writes is approved at once');
    expect((await item.getByTestId('item-body').innerText()) === RULE.body, 'its body shows as written');
    expect(/Applies to the whole project/.test(await item.innerText()), 'it applies to the whole project');
  });

  await test('knowledge: the agent proposes an item after a run; the next run says so; an editor approves it in the panel', async () => {
    await page.goto(sessionUrl);
    await page.getByText('What would you like to know?').waitFor();
    await script([{ code: 'print(42)' }, { final: 'There are 42 customers.' }], 0, [JSON.stringify({ items: [PROPOSED] })]);
    await ask('How many customers are there?');
    await lastRun().getByTestId('final-answer').filter({ hasText: '42 customers' }).waitFor();
    // The review pass runs after run.finished: its proposal is stored a moment later.
    const until = Date.now() + 30_000;
    let proposed = [];
    while (Date.now() < until) {
      proposed = (await api('GET', `/api/v1/projects/${project.id}/knowledge?status=proposed`)).body.items;
      if (proposed.length) break;
      await page.waitForTimeout(200);
    }
    expect(proposed.length === 1 && proposed[0].title === PROPOSED.title, `the review pass proposed the item: ${JSON.stringify(proposed)}`);
    // The next run's stream starts with knowledge.proposed: the session says so.
    await script([{ final: 'Still 42.' }]);
    await ask('And now?');
    const notice = page.getByTestId('proposed-notice');
    await notice.waitFor();
    const said = await notice.innerText();
    expect(/The agent proposed an item for the team's knowledge/.test(said), `the notice: ${said}`);
    await lastRun().getByTestId('final-answer').filter({ hasText: 'Still 42' }).waitFor();
    await page.locator('[data-testid=run][data-status=succeeded]').filter({ hasText: 'And now?' }).waitFor();
    await notice.getByRole('link', { name: 'Review' }).click();
    await page.waitForURL('**/knowledge?status=proposed');
    const item = page.getByTestId('knowledge-item').filter({ hasText: PROPOSED.title });
    expect((await item.getAttribute('data-status')) === 'proposed', 'the proposal waits for review');
    expect(/Proposed by the agent/.test(await item.innerText()), 'it says the agent proposed it');
    await page.getByLabel('Status').selectOption('');
    await page.getByTestId('knowledge-item').filter({ hasText: RULE.title }).waitFor();
    await shot('knowledge-panel');
    await item.getByRole('button', { name: 'Approve', exact: true }).click();
    await page.locator(`[data-testid=knowledge-item][data-status=approved]`).filter({ hasText: PROPOSED.title }).waitFor();
  });

  await test('knowledge: an answer that relied on the items says "Shaped by" them, each linking to it', async () => {
    await page.goto(sessionUrl);
    await lastRun().getByTestId('final-answer').waitFor();
    // The agent cites what it relied on by its label (K1, K2: the items as its prompt listed them).
    await script([{ final: 'There are 40 active customers; revenue leaves refunds out [K1] [K2].' }]);
    await ask('How many active customers are there, and what is their revenue?');
    // The new run, once its answer shows (the run before it has a line of its own).
    const run = page.locator('[data-testid=run]').filter({ hasText: 'How many active customers are there, and what is their revenue?' });
    await run.getByTestId('final-answer').filter({ hasText: '40 active customers' }).waitFor();
    const shaped = run.getByTestId('shaped-by').filter({ hasText: 'Shaped by:' });
    await shaped.waitFor();
    const text = await shaped.innerText();
    expect(text.includes('Shaped by:') && text.includes(RULE.title) && text.includes(PROPOSED.title), `the answer says what shaped it: ${text}`);
    await run.scrollIntoViewIfNeeded();
    await shot('answer-shaped-by');
    await shaped.getByTestId('shaped-by-item').filter({ hasText: PROPOSED.title }).click();
    await page.waitForURL('**/knowledge?item=**');
    await page.locator('[data-testid=knowledge-item].ring-2').filter({ hasText: PROPOSED.title }).waitFor();
  });

  await test('knowledge: Save as verified makes the answered run an example item, opened from the toast', async () => {
    await page.goto(sessionUrl);
    const run = page.locator('[data-testid=run]').filter({ hasText: 'How many active customers are there, and what is their revenue?' });
    await run.getByTestId('save-verified').click();
    await page.getByText('Saved as a verified example.').waitFor();
    await page.getByRole('button', { name: 'Open it' }).click();
    await page.waitForURL('**/knowledge?item=**');
    const example = page.locator('[data-testid=knowledge-item][data-kind=example].ring-2');
    await example.waitFor();
    expect((await example.getAttribute('data-status')) === 'approved', 'a verified example is approved');
    const body = await example.getByTestId('item-body').innerText();
    expect(body.includes('How many active customers are there'), `the example holds the question: ${body}`);
  });

  await test('checks: add a check, run the checks, see its result and the run in the history', async () => {
    await page.goto(`${base}/projects/${project.id}`);
    await page.getByTestId('checks-link').click();
    await page.waitForURL('**/checks');
    await page.getByTestId('checks-empty').waitFor();
    await page.getByRole('button', { name: 'Add check' }).click();
    const form = page.getByTestId('check-form');
    await form.getByLabel('Question').fill('How many active customers are there?');
    await form.getByLabel('Expected answer').fill('customers=40');
    await form.getByRole('button', { name: 'Add check' }).click();
    await page.getByTestId('check').filter({ hasText: 'customers=40' }).waitFor();
    await script([{ final: 'There are 40 active customers. @customers[40]' }]);
    await page.getByRole('button', { name: 'Run checks' }).click();
    const summary = page.getByTestId('check-run-summary');
    await summary.waitFor({ timeout: 60_000 });
    const said = await summary.innerText();
    expect(said === '100% · 1 of 1 passed', `the run's summary: ${said}`);
    const result = page.getByTestId('check-result');
    expect((await result.getAttribute('data-status')) === 'passed', 'the check passed');
    expect(/@customers\[40\]/.test(await result.getByTestId('check-answer').innerText()), 'its answer shows');
    expect((await page.getByTestId('check-history-row').count()) === 1, 'the history holds the run');
    // A second run whose answer is wrong: the history shows both, with the change.
    await script([{ final: 'There are 38 active customers. @customers[38]' }]);
    await page.getByRole('button', { name: 'Run checks' }).click();
    await page.getByTestId('check-history-row').nth(1).waitFor({ timeout: 60_000 });
    await page.locator('[data-testid=check-run][data-status=succeeded] [data-testid=check-result][data-status=failed]').waitFor({ timeout: 60_000 });
    const latest = await page.getByTestId('check-run-summary').innerText();
    expect(latest === '0% · 0 of 1 passed · 1 failed', `the second run's summary: ${latest}`);
    await page.getByTestId('check-history-row').first().filter({ hasText: '(−100 points)' }).waitFor();
    await shot('checks-page');
    // The first run again, from the history.
    await page.getByTestId('check-history-row').nth(1).click();
    await page.locator('[data-testid=check-result][data-status=passed]').waitFor();
    await result.getByRole('link', { name: 'Open its run' }).click();
    await page.waitForURL('**/sessions/**');
    await lastRun().getByTestId('final-answer').filter({ hasText: '40 active customers' }).waitFor();
  });
}
