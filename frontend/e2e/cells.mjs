// Cells of your own and the demo (issue 42, points 12 and 13), in the browser: run a Python cell
// (its output and a chart), an SQL cell on a SQLite source, then ask the agent, whose prompt holds
// the cell; on the backend with no model, open the demo project, replay its recorded session and
// run a cell on its dataset. Imported by run.mjs; `t` holds its helpers.
import { spawnSync } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { pageApi } from './page-api.mjs';
import { SHOTS_ON, settle } from './shots.mjs';

export const SHOTS = process.env.CELLS_SHOTS ?? '/work/shots/cells';

export async function cellsTests(t) {
  const { page, base, noModelBase, browser, script, llmPort, test, expect, sourcesDir, backendDir, email, password, chooseTheme, timeout, consoleErrors, ready } = t;
  mkdirSync(SHOTS, { recursive: true });
  const wide = { width: 1440, height: 900 };
  const narrow = { width: 390, height: 844 };
  // Each visual point at 1440 and 390 px, light and dark.
  const shots = async (p, name) => {
    if (!SHOTS_ON) return;
    for (const theme of ['Light', 'Dark']) {
      await p.setViewportSize(wide);
      await chooseTheme(p, theme);
      await p.waitForTimeout(300);
      await p.screenshot({ path: path.join(SHOTS, `${name}-1440-${theme.toLowerCase()}.png`) });
      await p.setViewportSize(narrow);
      await p.waitForTimeout(300);
      await p.screenshot({ path: path.join(SHOTS, `${name}-390-${theme.toLowerCase()}.png`) });
    }
    await p.setViewportSize(wide);
    await chooseTheme(p, 'Light');
  };
  const api = (p, method, url, body) => pageApi(p)(method, url, body);
  const upload = (p, projectId, name, text) =>
    p.evaluate(
      async ({ projectId, name, text }) => {
        const token = JSON.parse(localStorage.getItem('wb.auth')).token;
        const form = new FormData();
        form.append('file', new Blob([text], { type: 'text/csv' }), name);
        const r = await fetch(`/api/v1/projects/${projectId}/files`, { method: 'POST', headers: { Authorization: `Bearer ${token}` }, body: form });
        return r.status;
      },
      { projectId, name, text },
    );
  const runCell = async (p, code) => {
    const box = p.getByTestId('cell-editor');
    await box.fill(code);
    const before = await p.locator('[data-kind=cell]').count();
    await box.press('Control+Enter');
    const cell = p.locator('[data-kind=cell]').nth(before);
    // A session's first cell starts its sandbox: on a busy machine, tens of seconds.
    await cell.and(p.locator('[data-status=succeeded], [data-status=failed]')).waitFor({ timeout: 180_000 });
    return cell;
  };

  let sessionUrl;
  const SALES = 'region,month,revenue\nNorth,2026-01,1200.5\nSouth,2026-01,980\nNorth,2026-02,1310.25\nSouth,2026-02,1000\n';
  const CELL = [
    "import pandas as pd",
    "import plotly.express as px",
    "sales = pd.read_csv('sales.csv')",
    "by_region = sales.groupby('region', as_index=False)['revenue'].sum()",
    "print('top region:', by_region.sort_values('revenue').iloc[-1]['region'])",
    "fig = px.bar(by_region, x='region', y='revenue', title='Revenue by region (cell)')",
    'fig.show()',
  ].join('\n');

  await test('cells: a Python cell runs in the session with Ctrl+Enter, its output and chart show with a cell mark', async () => {
    const project = (await api(page, 'POST', '/api/v1/projects', { name: 'Cells' })).body;
    expect((await upload(page, project.id, 'sales.csv', SALES)) === 201, 'the dataset is uploaded');
    const session = (await api(page, 'POST', `/api/v1/projects/${project.id}/sessions`, { title: 'My cells' })).body;
    sessionUrl = `${base}/projects/${project.id}/sessions/${session.id}`;
    await page.goto(sessionUrl);
    await page.getByRole('radio', { name: 'Python' }).click();
    const cell = await runCell(page, CELL);
    expect((await cell.getAttribute('data-status')) === 'succeeded', 'the cell succeeded');
    expect((await cell.getByTestId('cell-mark').innerText()).includes('Python cell'), 'the cell is marked');
    expect((await cell.getByTestId('step-output').innerText()).includes('top region: North'), 'its output shows');
    await cell.getByTestId('artifact-plotly').locator('.js-plotly-plot').waitFor();
    expect((await cell.getByTestId('run-footer').innerText()).includes('no model'), 'no model was called');
    await shots(page, '01-python-cell');
    // A last line that is an expression shows its value, as a notebook does: a DataFrame as a table.
    const echoed = await runCell(page, 'sales.head(2)');
    await echoed.getByTestId('artifact-table').waitFor();
    expect((await echoed.getByTestId('artifact-table').innerText()).includes('1310.25') === false && (await echoed.getByTestId('artifact-table').innerText()).includes('980'), `the cell shows the first two rows: ${await echoed.innerText()}`);
  });

  await test('cells: an SQL cell on a SQLite source shows its table and keeps it as a variable', async () => {
    const db = path.join(sourcesDir, 'cells.db');
    const made = spawnSync(
      'uv',
      ['run', 'python', '-c', `import sqlite3\ndb = sqlite3.connect(${JSON.stringify(db)})\ndb.execute('DROP TABLE IF EXISTS orders')\ndb.execute('CREATE TABLE orders (id INTEGER, region TEXT, amount REAL)')\ndb.executemany('INSERT INTO orders VALUES (?, ?, ?)', [(i, ['north', 'south', 'east'][i % 3], 10.5 * i) for i in range(1, 13)])\ndb.commit()`],
      { cwd: backendDir },
    );
    expect(made.status === 0, `the SQLite source is made: ${made.stderr}`);
    const projectId = sessionUrl.split('/projects/')[1].split('/')[0];
    const source = await api(page, 'POST', `/api/v1/projects/${projectId}/sources`, { name: 'orders_db', url: `sqlite:///${db}` });
    expect(source.status === 201, `the source is added: ${JSON.stringify(source.body)}`);
    await page.reload();
    await page.getByRole('radio', { name: 'SQL' }).click();
    await page.getByRole('combobox', { name: 'Source' }).selectOption('orders_db');
    const cell = await runCell(page, 'SELECT region, COUNT(*) AS orders, SUM(amount) AS total\nFROM orders GROUP BY region ORDER BY region');
    expect((await cell.getAttribute('data-status')) === 'succeeded', `the SQL cell succeeded: ${await cell.innerText()}`);
    expect((await cell.getByTestId('cell-mark').innerText()).includes('SQL cell · orders_db'), 'marked with its source');
    expect((await cell.getByTestId('step-output').innerText()).includes('3 rows, kept as df_sql_1'), 'it says where the result is kept');
    await cell.getByTestId('artifact-table').waitFor();
    expect((await cell.getByTestId('artifact-table').innerText()).includes('south'), 'the table shows the rows');
    await shots(page, '02-sql-cell');
  });

  await test('cells: the agent sees the cells in the session history on the next question', async () => {
    await script([
      "Thought: The user's cell made by_region.\n<code>\nprint(by_region['revenue'].max(), len(df_sql_1))\n</code>",
      "Thought: Done.\n<code>\nfinal_answer('North leads, as your cell showed.')\n</code>",
    ]);
    await page.getByRole('radio', { name: 'Ask' }).click();
    const box = page.getByRole('textbox', { name: 'Ask a question about your data' });
    await box.fill('Which region leads?');
    await box.press('Enter');
    const run = page.locator('[data-testid=run]:not([data-kind=cell])').last();
    await run.and(page.locator('[data-status=succeeded]')).waitFor();
    expect((await run.innerText()).includes('North leads, as your cell showed.'), 'the agent answered');
    const prompts = (await (await fetch(`http://127.0.0.1:${llmPort}/control/prompts`)).json()).prompts;
    expect(prompts.length > 0 && prompts[0].includes('The user ran a Python cell'), 'the prompt tells of the Python cell');
    expect(prompts[0].includes('by_region = sales.groupby') && prompts[0].includes('top region: North'), "the prompt holds the cell's code and output");
    expect(prompts[0].includes('SQL cell on source orders_db') && prompts[0].includes('df_sql_1'), 'the prompt holds the SQL cell');
    await shots(page, '03-cells-then-question');
  });

  await test('cells: with no model, the demo project opens, replays its recorded session, and runs a cell', async () => {
    await ready();
    const ctx = await browser.newContext({ viewport: wide });
    const p = await ctx.newPage();
    p.setDefaultTimeout(timeout);
    p.on('console', (m) => m.type() === 'error' && consoleErrors.push(`console (demo): ${m.text()}`));
    p.on('pageerror', (e) => consoleErrors.push(`pageerror (demo): ${e.message}`));
    try {
      await p.goto(`${noModelBase}/login`);
      await p.getByLabel('Email').fill(email);
      await p.getByLabel('Password').fill(password);
      await p.getByRole('button', { name: 'Sign in' }).click();
      await p.getByRole('heading', { name: 'Projects' }).waitFor();
      await p.getByTestId('model-banner').getByTestId('open-demo').waitFor();
      await shots(p, '04-no-model-home');
      await p.getByTestId('model-banner').getByTestId('open-demo').click();
      await p.waitForURL('**/sessions/**');
      const banner = p.getByTestId('recorded-banner');
      await banner.waitFor();
      const run = p.locator('[data-testid=run]').first();
      await run.and(p.locator('[data-status=succeeded]')).waitFor();
      expect((await run.innerText()).includes('South'), 'the recorded answer shows');
      await shots(p, '05-demo-recorded');
      await banner.getByTestId('replay').click();
      await banner.getByRole('button', { name: 'Stop' }).waitFor();
      await run.and(p.locator('[data-status=running]')).waitFor();
      await settle(p, 2500);
      await shots(p, '06-demo-replaying');
      await banner.getByRole('button', { name: 'Show as stored' }).waitFor({ timeout: 60_000 });
      await run.and(p.locator('[data-status=succeeded]')).waitFor();
      await run.getByTestId('artifact-plotly').locator('.js-plotly-plot').waitFor();
      expect((await run.innerText()).includes('grew the most'), 'the replay ends with the answer');
      await shots(p, '07-demo-replayed');

      // The same project a second time: the same demo, not another.
      const url = p.url();
      await p.goto(`${noModelBase}/`);
      await p.getByTestId('model-banner').getByTestId('open-demo').click();
      await p.waitForURL(url);

      await p.getByTestId('composer-try-cells').click();
      const cell = await runCell(p, "import pandas as pd\nsales = pd.read_csv('monthly_sales.csv')\nprint(sales.groupby('region')['revenue'].sum().round(0))");
      expect((await cell.getAttribute('data-status')) === 'succeeded', `the cell ran with no model: ${await cell.innerText()}`);
      expect((await cell.getByTestId('step-output').innerText()).includes('North'), 'its output shows');
      await shots(p, '08-demo-cell');
    } finally {
      await ctx.close();
    }
  });
}
