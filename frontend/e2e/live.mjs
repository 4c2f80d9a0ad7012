// A team working live (issue 42, points 7-9) in two browser contexts: a teammate sees a new
// question as it runs and who else is in the session, a comment reaches the other side and the
// bell counts it, search finds a question and an artifact's name and its link opens the run.
// Imported by run.mjs; `t` holds its helpers.
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { pageApi } from './page-api.mjs';
import { SHOTS_ON } from './shots.mjs';

export const LIVE_SHOTS = process.env.LIVE_SHOTS ?? '/work/shots/live';

export async function liveTests(t) {
  const { page, base, script, test, expect, browser } = t;
  mkdirSync(LIVE_SHOTS, { recursive: true });
  const WIDE = { width: 1440, height: 900 };
  const PHONE = { width: 390, height: 844 };
  const MATE = { email: 'teammate@example.com', password: 'teammate-password-1' };
  // The API as a page's signed-in user (e2e/page-api.mjs).
  const api = (p, method, url, body) => pageApi(p)(method, url, body);
  // Screenshots of one view in both widths and both themes, named <name>-<width>-<theme>,
  // each after a reload and `prepare`. Without E2E_SHOTS the view is reloaded and prepared
  // once, as it is (what `prepare` waits for is still asserted), and no picture is taken.
  const shots = async (p, name, prepare = async () => undefined) => {
    if (!SHOTS_ON) {
      await p.reload();
      await prepare(WIDE);
      return;
    }
    for (const theme of ['light', 'dark']) {
      await p.evaluate((th) => localStorage.setItem('wb.theme', th), theme);
      for (const size of [WIDE, PHONE]) {
        await p.setViewportSize(size);
        await p.reload();
        await prepare(size);
        await p.screenshot({ path: path.join(LIVE_SHOTS, `${name}-${size.width}-${theme}.png`) });
      }
    }
    await p.evaluate(() => localStorage.removeItem('wb.theme'));
    await p.setViewportSize(WIDE);
  };
  let project;
  let session;
  let sessionUrl;
  let mateCtx;
  let mate;
  let runId;

  await test('live: a teammate sees a new question while it runs, follows it, sees the new title and who is here', async () => {
    project = (await api(page, 'POST', '/api/v1/projects', { name: 'Live team' })).body;
    const made = await api(page, 'POST', '/api/v1/users', { email: MATE.email, password: MATE.password });
    expect(made.status === 201, `the teammate was created: ${JSON.stringify(made)}`);
    const added = await api(page, 'POST', `/api/v1/projects/${project.id}/members`, { email: MATE.email, role: 'editor' });
    expect(added.status === 201, `the teammate joined: ${JSON.stringify(added)}`);
    session = (await api(page, 'POST', `/api/v1/projects/${project.id}/sessions`, {})).body;
    sessionUrl = `${base}/projects/${project.id}/sessions/${session.id}`;

    mateCtx = await browser.newContext({ viewport: WIDE });
    mate = await mateCtx.newPage();
    mate.setDefaultTimeout(60_000);
    await mate.goto(`${base}/login`);
    await mate.getByLabel('Email').fill(MATE.email);
    await mate.getByLabel('Password').fill(MATE.password);
    await mate.getByRole('button', { name: 'Sign in' }).click();
    await mate.getByRole('heading', { name: 'Projects' }).waitFor();
    await mate.goto(sessionUrl);
    await page.goto(sessionUrl);
    // Each sees the other in the session's header.
    await page.locator('[data-testid=presence-user][data-email="teammate@example.com"]').waitFor();
    await mate.locator('[data-testid=presence-user][data-email="admin@example.com"]').waitFor();
    const label = await mate.getByTestId('presence').getAttribute('aria-label');
    expect(/admin@example\.com/.test(label) && /teammate@example\.com \(you\)/.test(label), `presence names both: ${label}`);
    expect((await mate.getByTestId('session-title').innerText()) === 'New session', 'the session starts untitled');

    // What the teammate's page shows, in the order it shows it.
    await mate.evaluate(() => {
      window.__seen = [];
      const note = (what) => {
        if (window.__seen.at(-1) !== what) window.__seen.push(what);
      };
      new MutationObserver(() => {
        const run = document.querySelector('[data-testid=run]');
        if (run) note(`run:${run.getAttribute('data-status')}`);
        if (document.querySelector('[data-testid=final-answer]')) note('answer');
      }).observe(document.body, { subtree: true, childList: true, attributes: true });
    });
    // The run holds at its first step until the teammate has seen the question.
    const hold = [
      'import time',
      'import pandas as pd',
      'ready = False',
      'while not ready:',
      '    try:',
      "        pd.read_csv('go.csv')",
      '        ready = True',
      '    except Exception:',
      '        time.sleep(0.05)',
      "pd.DataFrame({'q': [1, 2]}).to_csv('quarterly-forecast.csv')",
    ].join('\n');
    await script([{ thought: 'Wait for the signal.', code: hold }, { final: 'Forecast written.' }]);
    const box = page.getByRole('textbox', { name: 'Ask a question about your data' });
    await box.fill('Write the quarterly forecast');
    await box.press('Enter');
    const theirs = mate.locator('[data-testid=run]').filter({ hasText: 'Write the quarterly forecast' });
    await theirs.waitFor();
    // The question is there while the run still goes: it came live, not with the finished history.
    expect(['queued', 'running'].includes(await theirs.getAttribute('data-status')), `the teammate sees it running: ${await theirs.getAttribute('data-status')}`);
    await mate.getByTestId('session-title').filter({ hasText: 'Write the quarterly forecast' }).waitFor();
    runId = (await api(page, 'GET', `/api/v1/sessions/${session.id}/runs`)).body.items[0].id;
    await releaseStep(t, session.id);
    await theirs.getByTestId('final-answer').filter({ hasText: 'Forecast written.' }).waitFor();
    const artifacts = (await api(page, 'GET', `/api/v1/sessions/${session.id}/artifacts`)).body.items.map((a) => a.name);
    expect(artifacts.includes('quarterly-forecast.csv'), `the step wrote its file: ${artifacts}`);
    const seen = await mate.evaluate(() => window.__seen);
    const running = seen.findIndex((s) => s === 'run:running' || s === 'run:queued');
    expect(running >= 0 && running < seen.indexOf('answer'), `the teammate saw the run going before its answer: ${seen.join(' → ')}`);
    await shots(mate, 'presence', async () => {
      await mate.locator('[data-testid=run]').first().waitFor();
    });
  });

  await test('live: a comment reaches the other side at once and the bell counts it', async () => {
    await mate.goto(`${sessionUrl}`);
    await page.goto(`${sessionUrl}`);
    const before = Number((await page.getByTestId('notification-count').count()) ? await page.getByTestId('notification-count').first().innerText() : 0);
    const thread = mate.locator(`[data-testid=comment-thread][data-run-id="${runId}"]`);
    await thread.getByTestId('comment-open').click();
    await thread.getByTestId('comment-input').fill('Can we split it by region?');
    await thread.getByTestId('comment-send').click();
    const onOwner = page.locator(`[data-testid=comment-thread][data-run-id="${runId}"] [data-testid=comment-body]`).filter({ hasText: 'Can we split it by region?' });
    await onOwner.waitFor();
    await page.getByTestId('notification-count').first().filter({ hasText: String(before + 1) }).waitFor();
    // The owner replies; the reply is indented under the comment on the teammate's page.
    const ownerThread = page.locator(`[data-testid=comment-thread][data-run-id="${runId}"]`);
    await ownerThread.getByRole('button', { name: /^Reply to/ }).first().click();
    await ownerThread.getByRole('textbox', { name: 'Reply' }).fill('Yes, next.');
    await ownerThread.getByRole('button', { name: 'Reply', exact: true }).click();
    await thread.getByTestId('comment-replies').getByText('Yes, next.').waitFor();
    // The teammate is an editor: told of the owner's reply, not of their own comment.
    await mate.getByTestId('notification-count').first().filter({ hasText: '1' }).waitFor();
    await shots(page, 'comments', async () => {
      await page.locator('[data-testid=comment]').first().waitFor();
      await page.locator('[data-testid=comment]').last().scrollIntoViewIfNeeded();
    });
    // The bell's notification leads to the comment.
    await page.goto(`${base}/projects/${project.id}`);
    await page.getByTestId('notification-bell').first().click();
    await page.getByTestId('notification').filter({ hasText: 'Can we split it by region?' }).click();
    await page.waitForURL(`**/sessions/${session.id}?run=${runId}#comment-*`);
    await page.locator('[data-testid=comment-body]').filter({ hasText: 'Can we split it by region?' }).waitFor();
    await shots(page, 'bell', async (size) => {
      await page.locator('[data-testid=comment]').first().waitFor();
      const bell = page.getByTestId('notification-bell').locator('visible=true').first();
      await bell.click();
      await page.getByRole('menu').waitFor();
      void size;
    });
    await page.keyboard.press('Escape');
  });

  await test('live: the bell counts a teammate\'s comment at once in every tab, with no reload and no refetch', async () => {
    // The owner is on the project's page (no session stream open), in two tabs.
    const second = await page.context().newPage();
    second.setDefaultTimeout(60_000);
    for (const p of [page, second]) await p.goto(`${base}/projects/${project.id}`);
    await api(page, 'POST', '/api/v1/notifications/read', {});
    const count = (p) => p.getByTestId('notification-count').locator('visible=true');
    for (const p of [page, second]) await count(p).waitFor({ state: 'detached' });
    // Every request the tabs make for the notifications' list from now on.
    const refetched = [];
    for (const p of [page, second])
      p.on('request', (r) => {
        if (new URL(r.url()).pathname === '/api/v1/notifications') refetched.push(r.url());
      });
    const made = await api(mate, 'POST', `/api/v1/runs/${runId}/comments`, { body: 'Live to the bell, no timer.' });
    expect(made.status === 201, `the teammate commented: ${JSON.stringify(made)}`);
    for (const p of [page, second]) await count(p).filter({ hasText: /^1$/ }).waitFor();
    expect(refetched.length === 0, `the count came on the stream, not a refetch: ${refetched.join(', ')}`);
    // The list has it too, at the top.
    await second.getByTestId('notification-bell').locator('visible=true').click();
    await second.getByTestId('notification').first().filter({ hasText: 'Live to the bell, no timer.' }).waitFor();
    await second.keyboard.press('Escape');
    // Read in one tab, the other clears.
    await page.getByTestId('notification-bell').locator('visible=true').click();
    await page.getByRole('button', { name: 'Mark all read' }).click();
    await page.keyboard.press('Escape');
    await count(second).waitFor({ state: 'detached' });
    if (process.env.E2E_SHOTS) {
      const dir = '/work/shots/alerts';
      mkdirSync(dir, { recursive: true });
      await api(mate, 'POST', `/api/v1/runs/${runId}/comments`, { body: 'A second comment, with a longer text that takes two lines in the menu.' });
      await count(second).filter({ hasText: /^1$/ }).waitFor();
      for (const theme of ['light', 'dark']) {
        await second.evaluate((th) => localStorage.setItem('wb.theme', th), theme);
        for (const size of [WIDE, PHONE]) {
          await second.setViewportSize(size);
          await second.reload();
          await count(second).filter({ hasText: /^1$/ }).waitFor();
          await second.getByTestId('notification-bell').locator('visible=true').click();
          await second.getByRole('menu').waitFor();
          await second.screenshot({ path: path.join(dir, `bell-live-${size.width}-${theme}.png`) });
          await second.keyboard.press('Escape');
        }
      }
      await second.evaluate(() => localStorage.removeItem('wb.theme'));
    }
    await second.close();
  });

  // Ctrl+K until the search opens: right after a page loads, the shortcut's listener may not be there yet.
  const openSearch = async () => {
    for (let i = 0; i < 10 && !(await page.getByTestId('search-input').isVisible()); i++) {
      await page.keyboard.press('Control+k');
      await page.getByTestId('search-input').waitFor({ timeout: 1000 }).catch(() => undefined);
    }
  };

  await test('search: finds a question and an artifact name; its link opens the session at the run', async () => {
    await page.goto(`${base}/`);
    await openSearch();
    const dialog = page.getByTestId('search-dialog');
    await dialog.getByTestId('search-input').fill('quarterly');
    const question = dialog.locator('[data-testid=search-hit][data-kind=question]');
    await question.first().waitFor();
    const marked = await question.first().locator('mark').first().innerText();
    expect(/quarterly/i.test(marked), `the hit is marked: ${marked}`);
    await dialog.getByTestId('search-input').fill('forecast');
    const artifact = dialog.locator('[data-testid=search-hit][data-kind=artifact]');
    await artifact.first().waitFor();
    expect(/quarterly-forecast\.csv/.test(await artifact.first().innerText()), 'the artifact is found by its name');
    await shots(page, 'search', async () => {
      await openSearch();
      await page.getByTestId('search-input').fill('forecast');
      await page.locator('[data-testid=search-hit]').first().waitFor();
    });
    await openSearch();
    await page.getByTestId('search-input').fill('forecast');
    await page.locator('[data-testid=search-hit][data-kind=artifact]').first().click();
    await page.waitForURL(`**/sessions/${session.id}?run=${runId}`);
    await page.locator(`#run-${runId}`).waitFor();
    const box = await page.locator(`#run-${runId}`).boundingBox();
    expect(box && box.y < 900, `the run is in view: ${JSON.stringify(box)}`);
    await mateCtx?.close();
  });
}

// The held step waits for go.csv in the session's workspace, written here as the backend
// tests' `release` does: the step surely runs while the teammate looks, on a machine of any speed.
async function releaseStep(t, sessionId) {
  writeFileSync(path.join(t.dataDir, 'workspaces', sessionId, 'go.csv'), 'go\n1\n');
}
