// Branches (issue 43, points 3 and 4), in the browser: a three-question session where each question
// changes `x`; "Branch from here" on question 1 opens a branch whose first answer prints x as it was
// then; editing question 2 of the parent asks the edited question in a branch after question 1; the
// sidebar shows both branches under the parent; the compare view marks the changed number and the
// table's rows added and removed; deleting the parent asks about its branches.
// Imported by run.mjs; `t` holds its helpers. Screenshots (E2E_SHOTS set) at 1440 and 390 px, light and dark.
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { pageApi } from './page-api.mjs';

export const SHOTS = process.env.BRANCHES_SHOTS ?? '/work/shots/br-web';

const step = (code, thought = 'Thought: On it.') => `${thought}\n<code>\n${code}\n</code>`;
const table = (rows) =>
  `import pandas as pd\nby_region = pd.DataFrame(${JSON.stringify(rows)}, columns=['region', 'revenue'])\ndisplay(by_region)`;

export async function branchesTests(t) {
  const { page, base, script, test, expect, ask, chooseTheme } = t;
  const api = pageApi(page);
  const runs = () => page.locator('[data-testid=run]');
  const finished = async (run) => run.and(page.locator('[data-status=succeeded], [data-status=failed]')).waitFor({ timeout: 180_000 });
  const sessionIdOf = (url) => url.split('/sessions/')[1]?.split(/[/?#]/)[0];
  // `narrow` readies a phone's view (the sidebar is a drawer there: open it) and is undone after.
  const shots = async (name, locate, narrow) => {
    if (!process.env.E2E_SHOTS) return;
    mkdirSync(SHOTS, { recursive: true });
    for (const theme of ['Light', 'Dark']) {
      await page.setViewportSize({ width: 1440, height: 900 });
      await chooseTheme(page, theme);
      for (const [width, height] of [
        [1440, 900],
        [390, 844],
      ]) {
        await page.setViewportSize({ width, height });
        if (narrow && width < 768) await narrow();
        if (locate) await locate().scrollIntoViewIfNeeded();
        await page.waitForTimeout(500);
        await page.screenshot({ path: path.join(SHOTS, `${name}-${width}-${theme.toLowerCase()}.png`) });
        if (narrow && width < 768) await page.keyboard.press('Escape');
      }
    }
    await page.setViewportSize({ width: 1440, height: 900 });
    await chooseTheme(page, 'System');
  };

  let projectId;
  let parentId;
  let fromHereId;
  let editedId;
  const Q1 = 'Set x to 10';
  const Q2 = 'Now set x to 20, with the revenue by region';
  const Q3 = 'Add 5 to x';

  await test('branches: Branch from here on question 1 opens a branch whose answer sees x as it was then', async () => {
    const project = (await api('POST', '/api/v1/projects', { name: 'Branching' })).body;
    projectId = project.id;
    const session = (await api('POST', `/api/v1/projects/${projectId}/sessions`, { title: 'What if x' })).body;
    parentId = session.id;
    await page.goto(`${base}/projects/${projectId}/sessions/${parentId}`);
    const asked = [
      [Q1, [step("x = 10\nfinal_answer(f'x is {x}')")]],
      [Q2, [step(`x = 20\n${table([['North', 120], ['South', 80]])}\nfinal_answer(f'x is {x}; North made 120')`)]],
      [Q3, [step("x = x + 5\nfinal_answer(f'x is {x}')")]],
    ];
    for (const [i, [question, replies]] of asked.entries()) {
      await script(replies);
      await ask(question);
      await finished(runs().nth(i));
      expect((await runs().nth(i).getAttribute('data-status')) === 'succeeded', `question ${i + 1} succeeded: ${await runs().nth(i).innerText()}`);
    }
    expect((await runs().nth(2).innerText()).includes('x is 25'), 'the third answer is x is 25');

    await script([step("print('x in the branch:', x)\nfinal_answer(f'The branch sees x = {x}')")]);
    await runs().nth(0).getByTestId('branch-from-here').click();
    await page.waitForURL((url) => sessionIdOf(url.pathname) && sessionIdOf(url.pathname) !== parentId);
    fromHereId = sessionIdOf(page.url());
    const divider = page.getByTestId('branch-divider');
    await divider.filter({ hasText: Q1 }).waitFor();
    const said = await divider.innerText();
    expect(said.includes('Branched from') && said.includes('What if x') && said.includes(Q1), `the divider names the parent and the question: ${said}`);
    expect((await page.getByTestId('inherited-run').count()) === 1, 'the past holds question 1 only');
    expect((await page.getByTestId('inherited-run').getByTestId('branch-from-here').count()) === 1, 'the past can be branched from');
    expect((await page.getByTestId('inherited-run').getByRole('button', { name: 'Retry' }).count()) === 0, 'the past cannot be retried here');
    // The question box waits, empty and focused.
    const box = page.getByRole('textbox', { name: 'Ask a question about your data' });
    expect((await box.inputValue()) === '', 'the box is empty');
    expect(await box.evaluate((el) => el === document.activeElement), 'the box has the focus');

    await ask('What is x here?');
    const own = runs().nth(1);
    await finished(own);
    const answer = await own.innerText();
    expect(answer.includes('The branch sees x = 10'), `the branch's answer shows x as it was after question 1: ${answer}`);
    await own.getByTestId('steps-toggle').click();
    expect((await own.getByTestId('step-output').first().innerText()).includes('x in the branch: 10'), 'the printed value is 10');
    const restored = page.getByTestId('branch-restored');
    await restored.waitFor();
    const how = await restored.innerText();
    expect(/restored from the snapshot|Rebuilt by replaying/.test(how), `the divider says how the variables came back: ${how}`);
    await shots('01-branch-past', () => divider);
  });

  await test('branches: editing question 2 of the parent asks the edited question in a branch after question 1', async () => {
    await page.goto(`${base}/projects/${projectId}/sessions/${parentId}`);
    await finished(runs().nth(2));
    await script([step(`x = 99\n${table([['North', 120], ['East', 45]])}\nfinal_answer(f'x is {x}; North made 150')`)]);
    const second = runs().nth(1);
    await second.getByRole('button', { name: 'Edit' }).click();
    await second.getByRole('textbox', { name: 'Edit the question' }).fill('Set x to 99 instead, with the revenue by region');
    await second.getByRole('button', { name: 'Ask in a new branch' }).click();
    await page.waitForURL((url) => ![undefined, parentId, fromHereId].includes(sessionIdOf(url.pathname)));
    editedId = sessionIdOf(page.url());
    // The parent's runs may still show for a moment: wait for the branch's own.
    await page.getByTestId('branch-divider').waitFor();
    const asked = runs().filter({ hasText: 'Set x to 99 instead' });
    await asked.waitFor();
    await finished(asked);
    expect((await asked.innerText()).includes('x is 99; North made 150'), `the edited question ran in the branch: ${await asked.innerText()}`);
    expect((await page.getByTestId('branch-divider').innerText()).includes(Q1), 'the branch parts after question 1');
    // The parent is untouched: still three questions.
    const parentRuns = (await api('GET', `/api/v1/sessions/${parentId}/runs`)).body.items;
    expect(parentRuns.length === 3, `the parent keeps its three questions: ${parentRuns.length}`);
  });

  await test('branches: the sidebar shows both branches under the parent, each after its question, collapsible', async () => {
    await page.goto(`${base}/projects/${projectId}/sessions/${editedId}`);
    const tree = page.getByTestId('session-tree');
    const parentRow = tree.locator(`[data-session-id="${parentId}"]`);
    await parentRow.waitFor();
    expect((await parentRow.getAttribute('data-depth')) === '0', 'the parent is at the top');
    for (const id of [fromHereId, editedId]) {
      const row = tree.locator(`[data-session-id="${id}"]`);
      expect((await row.getAttribute('data-depth')) === '1', 'a branch is one step in');
      await row.getByTestId('branch-after').filter({ hasText: Q1 }).waitFor();
    }
    expect((await tree.locator(`[data-session-id="${editedId}"] a`).getAttribute('aria-current')) === 'page', 'the current branch is marked');
    await shots('02-tree', () => tree.last(), () => page.getByRole('button', { name: 'Open navigation' }).click());
    const toggle = parentRow.getByRole('button', { name: /^Hide the 2 branches/ });
    await toggle.click();
    expect((await tree.locator(`[data-session-id="${fromHereId}"]`).count()) === 0, 'closed, the branches are hidden');
    await parentRow.getByRole('button', { name: /^Show the 2 branches/ }).click();
    await tree.locator(`[data-session-id="${fromHereId}"]`).waitFor();
  });

  await test('branches: the project page lists the branches under their parent, collapsible', async () => {
    await page.goto(`${base}/projects/${projectId}`);
    const list = page.getByTestId('project-sessions');
    const parentRow = list.locator(`[data-session-id="${parentId}"]`);
    await parentRow.waitFor();
    expect((await parentRow.getAttribute('data-depth')) === '0', 'the parent is at the top of the list');
    for (const id of [fromHereId, editedId]) {
      const row = list.locator(`[data-session-id="${id}"]`);
      expect((await row.getAttribute('data-depth')) === '1', 'a branch is listed one step in, under its parent');
      await row.getByTestId('project-branch-after').filter({ hasText: Q1 }).waitFor();
    }
    const ids = await list.locator('[data-testid=project-session-row]').evaluateAll((rows) => rows.map((r) => r.getAttribute('data-session-id')));
    expect(ids.indexOf(parentId) < ids.indexOf(fromHereId) && ids.indexOf(parentId) < ids.indexOf(editedId), `the branches follow their parent: ${ids}`);
    await shots('05-project-list', () => list);
    await parentRow.getByRole('button', { name: /^Hide the 2 branches/ }).click();
    expect((await list.locator(`[data-session-id="${fromHereId}"]`).count()) === 0, 'closed, the branches are hidden');
    await parentRow.getByText('2 branches').waitFor();
    await parentRow.getByRole('button', { name: /^Show the 2 branches/ }).click();
    await list.locator(`[data-session-id="${editedId}"]`).waitFor();
  });

  await test('branches: a branch shows how its variables came back as soon as its first run has them, before it ends', async () => {
    const parentRuns = (await api('GET', `/api/v1/sessions/${parentId}/runs`)).body.items;
    const made = (await api('POST', `/api/v1/sessions/${parentId}/branch`, { after_run_id: parentRuns[1].id })).body;
    await page.goto(`${base}/projects/${projectId}/sessions/${made.id}`);
    await page.getByTestId('branch-divider').filter({ hasText: Q2 }).waitFor();
    expect((await page.getByTestId('branch-restored').count()) === 0, 'no note before the first run');
    // The first run waits for the user's answer: the note can only come from the run's live event.
    await script([step("go = ask_user('Go on?')"), step("final_answer(f'x is {x}')")]);
    await ask('Wait for me, then tell x');
    const own = runs().filter({ hasText: 'Wait for me, then tell x' });
    await own.getByTestId('question').filter({ hasText: 'Go on?' }).waitFor();
    const restored = page.getByTestId('branch-restored');
    await restored.waitFor();
    expect((await own.getByTestId('question').getAttribute('data-state')) === 'waiting', 'the run still waits while the note shows');
    expect(/restored from the snapshot|Rebuilt by replaying/.test(await restored.innerText()), `the note says how: ${await restored.innerText()}`);
    await own.getByRole('textbox', { name: 'Your answer' }).fill('yes');
    await own.getByRole('textbox', { name: 'Your answer' }).press('Enter');
    await finished(own);
    expect((await own.innerText()).includes('x is 20'), `the branch after question 2 sees x = 20: ${await own.innerText()}`);
    expect((await api('DELETE', `/api/v1/sessions/${made.id}`)).status === 204, 'the extra branch is deleted');
    // Back where the next test starts: the edited branch.
    await page.goto(`${base}/projects/${projectId}/sessions/${editedId}`);
    await page.getByTestId('branch-compare-link').waitFor();
  });

  await test('branches: the compare view shows both sides from where they part, the changed number and rows marked', async () => {
    await page.getByTestId('branch-compare-link').click();
    await page.waitForURL(`**/projects/${projectId}/compare/${parentId}/${editedId}`);
    const view = page.getByTestId('compare-view');
    await view.getByTestId('compare-pair').first().waitFor();
    expect((await view.getByTestId('compare-common').innerText()).includes(`1 question in common, up to: “${Q1}”`), 'the common past is one line');
    const first = view.getByTestId('compare-pair').first();
    const left = first.getByTestId('compare-side-left');
    const right = first.getByTestId('compare-side-right');
    expect((await left.getByTestId('changed-number').allInnerTexts()).join(' ') === '20 120', `left marks 20 and 120: ${await left.getByTestId("changed-number").allInnerTexts()}`);
    expect((await right.getByTestId('changed-number').allInnerTexts()).join(' ') === '99 150', 'right marks 99 and 150');
    await right.getByTestId('compare-table-summary').filter({ hasText: '1 row added, 1 removed' }).waitFor();
    expect((await right.getByTestId('row-added').innerText()).includes('East'), 'East is added on the right');
    expect((await right.getByTestId('row-removed').innerText()).includes('South'), 'South is removed on the right');
    // Question 3 of the parent has nothing facing it.
    expect((await view.getByTestId('compare-pair').nth(1).getByTestId('compare-side-right').innerText()).includes('No question here'), 'the parent goes on alone');
    // The comparison is a link of its own.
    await page.reload();
    await view.getByTestId('changed-number').first().waitFor();
    await shots('03-compare', () => view.getByTestId('compare-pair').first());
    // At 390 px the sides are tabs.
    await page.setViewportSize({ width: 390, height: 844 });
    await page.getByRole('tab', { name: /^Left: / }).click();
    expect(await left.isVisible(), 'the left side shows when its tab is chosen');
    expect(!(await right.isVisible()), 'the right side hides');
    await page.setViewportSize({ width: 1440, height: 900 });
  });

  await test('branches: editing the first question asks it in a new session of the project, which says why', async () => {
    await page.goto(`${base}/projects/${projectId}/sessions/${parentId}`);
    await finished(runs().nth(2));
    await script([step("x = 1\nfinal_answer(f'x is {x}')")]);
    const first = runs().nth(0);
    await first.getByRole('button', { name: 'Edit' }).click();
    await first.getByRole('textbox', { name: 'Edit the question' }).fill('Set x to 1');
    await first.getByRole('button', { name: 'Ask in a new branch' }).click();
    await page.waitForURL((url) => ![undefined, parentId, fromHereId, editedId].includes(sessionIdOf(url.pathname)));
    await page.getByTestId('arrival-note').waitFor();
    const note = await page.getByTestId('arrival-note').innerText();
    expect(note.includes('a new session starts here') && note.includes('What if x'), `the new session says why it is there: ${note}`);
    await finished(runs().nth(0));
    expect((await runs().nth(0).innerText()).includes('x is 1'), 'the edited first question ran there');
    expect((await page.getByTestId('branch-divider').count()) === 0, 'it is no branch');
  });

  await test('branches: deleting the parent asks about its branches, and kept ones stand on their own with their past', async () => {
    await page.goto(`${base}/projects/${projectId}/sessions/${parentId}`);
    await page.getByRole('button', { name: 'Actions for What if x', exact: true }).click();
    await page.getByRole('menuitem', { name: 'Delete' }).click();
    const dialog = page.getByTestId('delete-session-dialog');
    await dialog.waitFor();
    expect((await dialog.innerText()).includes('It has 2 branches'), `the dialog counts the branches: ${await dialog.innerText()}`);
    await dialog.getByRole('button', { name: 'Keep its 2 branches as separate sessions' }).waitFor();
    await dialog.getByRole('button', { name: 'Delete them too' }).waitFor();
    await dialog.getByTestId('delete-keep-branches').click();
    await page.waitForURL(`**/projects/${projectId}`);
    const tree = page.getByTestId('session-tree');
    await tree.locator(`[data-session-id="${parentId}"]`).waitFor({ state: 'detached' });
    for (const id of [fromHereId, editedId]) expect((await tree.locator(`[data-session-id="${id}"]`).getAttribute('data-depth')) === '0', 'a kept branch stands alone');
    await page.goto(`${base}/projects/${projectId}/sessions/${editedId}`);
    await finished(runs().nth(1));
    expect((await runs().nth(0).innerText()).includes(Q1), 'the kept branch still shows its past');
  });

  await test('branches: a branch reads the file versions its past read, says so, and moves to the latest on request', async () => {
    const upload = (text) =>
      page.evaluate(
        async ({ projectId, text }) => {
          const token = JSON.parse(localStorage.getItem('wb.auth')).token;
          const form = new FormData();
          form.append('file', new Blob([text], { type: 'text/csv' }), 'orders.csv');
          const r = await fetch(`/api/v1/projects/${projectId}/files`, { method: 'POST', headers: { Authorization: `Bearer ${token}` }, body: form });
          return r.status;
        },
        { projectId: pinnedProject, text },
      );
    const pinnedProject = (await api('POST', '/api/v1/projects', { name: 'Orders by version' })).body.id;
    const session = (await api('POST', `/api/v1/projects/${pinnedProject}/sessions`, { title: 'Orders' })).body;
    expect((await upload('x\n1\n2\n')) === 201, 'version 1 uploaded');
    await page.goto(`${base}/projects/${pinnedProject}/sessions/${session.id}`);
    await script([step("import pandas as pd\ntotal = int(pd.read_csv('orders.csv')['x'].sum())\nfinal_answer(f'The total is {total}')")]);
    await ask('What is the total of the orders?');
    await finished(runs().nth(0));
    expect((await upload('x\n10\n20\n')) === 201, 'version 2 uploaded');
    const [run] = (await api('GET', `/api/v1/sessions/${session.id}/runs`)).body.items;
    const made = await api('POST', `/api/v1/sessions/${session.id}/branch`, { after_run_id: run.id });
    expect(made.status === 201, `branched: ${made.status}`);
    await page.goto(`${base}/projects/${pinnedProject}/sessions/${made.body.id}`);
    const note = page.getByTestId('branch-file-pins');
    await note.waitFor();
    const said = await note.innerText();
    expect(said.includes('Reads orders.csv as version 1 (latest is 2).') && said.includes('Use latest files'), `the branch says which version it reads: ${said}`);
    await shots('08-file-pins', () => page.getByTestId('branch-divider'));
    await note.getByTestId('branch-use-latest-files').click();
    await note.waitFor({ state: 'detached' });
    const after = (await api('GET', `/api/v1/sessions/${made.body.id}`)).body;
    expect(after.file_pins.length === 0, `the branch reads the latest versions now: ${JSON.stringify(after.file_pins)}`);
  });
}
