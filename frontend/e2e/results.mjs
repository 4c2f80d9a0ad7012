// Results that look finished (issue 42, points 4 and 5), in the browser: a result table with dates
// as dates, a named index kept and no row numbers, called after its variable; a workbook the code
// wrote with one download control and a preview with its sheets; long code lines that wrap; a
// chart's title clear of Plotly's toolbar; the shared report with its question once.
// Imported by run.mjs; `t` holds its helpers. Screenshots at 1440 and 390 px, light and dark.
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { pageApi } from './page-api.mjs';
import { SHOTS_ON, settle, snap } from './shots.mjs';

export const SHOTS = process.env.RESULTS_SHOTS ?? '/work/shots/results';

const CODE = [
  'import pandas as pd',
  'import plotly.express as px',
  "orders = pd.DataFrame({'day': pd.to_datetime(['2023-04-01', '2023-04-02', '2023-05-03', '2023-05-04']), 'region': ['North', 'South', 'North', 'South'], 'amount': [120.5, 80.25, 99.0, 143.75]})",
  "by_month = orders.groupby([orders['day'].dt.to_period('M').dt.to_timestamp().rename('month'), 'region'])['amount'].sum().reset_index().set_index('month')",
  'display(by_month)',
  "with pd.ExcelWriter('report.xlsx') as book:",
  "    orders.to_excel(book, sheet_name='Orders', index=False)",
  "    by_month.reset_index().to_excel(book, sheet_name='By month', index=False)",
  "fig = px.bar(by_month.reset_index(), x='month', y='amount', color='region', title='Revenue by month and region, April to May 2023 (all orders, refunds left out)')",
  'fig.show()',
].join('\n');

export async function resultsTests(t) {
  const { page, base, script, test, expect, ask, lastRun } = t;
  mkdirSync(SHOTS, { recursive: true });
  const shot = (name) => snap(page, path.join(SHOTS, `${name}.png`), { fullPage: false });
  const api = pageApi(page);
  // The theme menu at the foot of the sidebar (shown in a wide window): the app redraws its charts too.
  const chooseTheme = async (name) => {
    await page.getByRole('button', { name: /^Theme: / }).click();
    await page.getByRole('menuitemradio', { name }).click();
    await page.getByRole('menu').waitFor({ state: 'detached' });
  };
  // Four screenshots of what is on screen now: 1440 and 390 px, light and dark.
  const shots = async (name, locate) => {
    if (!SHOTS_ON) return;
    for (const theme of ['Light', 'Dark']) {
      await page.setViewportSize({ width: 1440, height: 900 });
      await chooseTheme(theme);
      for (const [width, height] of [
        [1440, 900],
        [390, 844],
      ]) {
        await page.setViewportSize({ width, height });
        if (locate) await locate().scrollIntoViewIfNeeded();
        await page.waitForTimeout(500);
        await shot(`${name}-${width}-${theme.toLowerCase()}`);
      }
    }
    await page.setViewportSize({ width: 1440, height: 900 });
    await chooseTheme('System');
  };
  const QUESTION = 'What is the revenue by month and region?';
  let session;

  await test('results: a table shows dates as dates under its variable name; a workbook has one download and previews its sheets', async () => {
    const project = (await api('POST', '/api/v1/projects', { name: 'Finished results' })).body;
    // Named as the browser names a new session: after its first question.
    session = (await api('POST', `/api/v1/projects/${project.id}/sessions`, { title: QUESTION })).body;
    await page.goto(`${base}/projects/${project.id}/sessions/${session.id}`);
    await page.getByText('What would you like to know?').waitFor();
    await script([{ thought: 'Sum by month and region, save a workbook and chart it.', code: CODE }, { final: 'North led in April, South in May.' }]);
    await ask(QUESTION);
    await lastRun().getByTestId('final-answer').filter({ hasText: 'South in May' }).waitFor();
    const run = lastRun();
    const table = run.locator('[data-testid=artifact-table][data-name="by_month.json"]');
    await table.waitFor();
    expect((await table.getByTestId('artifact-title').innerText()) === 'by_month', 'the table is called after its variable');
    const text = await table.innerText();
    expect(text.includes('2023-04-01') && !/T00:00|00:00:00/.test(text), `dates read as dates: ${text}`);
    const headers = await table.locator('th').allInnerTexts();
    expect(headers[0].startsWith('month') && !headers.some((h) => /^index/.test(h)), `the named index leads, no row numbers: ${headers}`);

    const book = run.locator('[data-testid=artifact-file][data-name="report.xlsx"]');
    await book.waitFor();
    const downloads = await book.getByRole('button', { name: /download/i }).count();
    expect(downloads === 1, `one download control for the file: ${downloads}`);
    const preview = book.getByTestId('file-preview');
    await preview.getByText('2023-04-01').first().waitFor();
    await preview.getByRole('tab', { name: 'By month' }).click();
    await preview.locator('th').filter({ hasText: 'month' }).first().waitFor();
    await preview.locator('[aria-busy=false]').waitFor();
    const meta = (await api('GET', `/api/v1/sessions/${session.id}/artifacts`)).body.items.find((a) => a.name === 'report.xlsx');
    expect(meta.mime === 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet', `the workbook's type: ${meta.mime}`);
    await shots('01-table-dates-named-index', () => table);
    await shots('02-xlsx-preview', () => book);
  });

  await test("results: long code lines wrap in the step, and the chart's toolbar leaves its title clear", async () => {
    const run = lastRun();
    const toggle = run.getByTestId('steps-toggle');
    if ((await toggle.getAttribute('aria-expanded')) === 'false') await toggle.click();
    await run.getByTestId('run-steps').waitFor();
    const step = run.getByTestId('step-card').first();
    if ((await step.getAttribute('data-open')) === 'false') await step.locator('header').click();
    const code = step.getByTestId('code').first();
    await code.waitFor();
    const fits = () => code.evaluate((el) => el.scrollWidth <= el.clientWidth + 1);
    expect((await code.getAttribute('data-wrap')) === 'wrap' && (await fits()), 'long lines wrap within the block');
    await page.setViewportSize({ width: 390, height: 844 });
    expect(await fits(), 'and at 390 px too');
    await page.setViewportSize({ width: 1440, height: 900 });
    await shots('03-long-code-line', () => code);
    await step.getByRole('button', { name: 'Show long lines unwrapped' }).click();
    const scrolls = await code.evaluate((el) => getComputedStyle(el).overflowX === 'scroll' && el.scrollWidth > el.clientWidth);
    expect(scrolls, 'unwrapped, the block scrolls with its scrollbar shown');
    await page.setViewportSize({ width: 390, height: 844 });
    await code.scrollIntoViewIfNeeded();
    await settle(page, 300);
    await shot('03-long-code-line-unwrapped-390-light');
    await page.setViewportSize({ width: 1440, height: 900 });
    await step.getByRole('button', { name: 'Wrap long lines' }).click();

    const chart = run.getByTestId('artifact-plotly').first();
    await chart.locator('.main-svg').first().waitFor();
    await chart.scrollIntoViewIfNeeded();
    const box = await chart.locator('.main-svg').first().boundingBox();
    await page.mouse.move(box.x + box.width / 2, box.y + box.height / 2);
    const bar = chart.locator('.modebar');
    await bar.waitFor();
    const overlap = async () => {
      const title = await chart.locator('.gtitle').boundingBox();
      const tools = await bar.boundingBox();
      if (!title || !tools) return false;
      return !(tools.x + tools.width <= title.x || title.x + title.width <= tools.x || tools.y + tools.height <= title.y || title.y + title.height <= tools.y);
    };
    expect(!(await overlap()), 'at 1440 px the toolbar does not cover the title');
    await shots('04-chart-title', () => chart);
    await page.setViewportSize({ width: 390, height: 844 });
    await page.waitForTimeout(500);
    const shown = await chart.locator('.modebar').count();
    expect(shown === 0 || !(await overlap()), 'at 390 px no toolbar lies over the title');
    const whole = await chart.evaluate((el) => {
      const title = el.querySelector('.gtitle')?.getBoundingClientRect();
      const card = el.getBoundingClientRect();
      return !!title && title.left >= card.left && title.right <= card.right;
    });
    expect(whole, 'at 390 px a long title wraps within the chart');
    await page.setViewportSize({ width: 1440, height: 900 });
  });

  await test('results: the shared report shows its question once', async () => {
    const made = (await api('POST', `/api/v1/sessions/${session.id}/shares`, {})).body;
    const reader = await page.context().newPage();
    await reader.goto(made.url);
    const body = await reader.locator('body').innerText();
    const times = body.split(QUESTION).length - 1;
    expect(times === 1, `the question reads once: ${times}`);
    expect((await reader.locator('h1').innerText()) === 'Finished results', 'the project heads the report');
    const widths = SHOTS_ON ? [[1440, 900], [390, 844]] : [];
    for (const [width, height] of widths) {
      await reader.setViewportSize({ width, height });
      await reader.waitForTimeout(300);
      await snap(reader, path.join(SHOTS, `05-shared-report-${width}.png`));
    }
    await reader.close();
  });
}
