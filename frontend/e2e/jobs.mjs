// Jobs (issue 45, point 7), in the browser: a two-question session over "sales data.csv" made into
// a job with "Make this a job" (two clicks); the job's page shows its checks being written, then
// ready; Run now (its parameter's default filled in) adds a run to the history with its values; a
// "% change" alert is set and listed; a new version of the file and another run show the change
// (before → after, the per cent) and the alert's delivery; a schedule "every Monday 08:00" shows its
// next run; the project's Jobs page lists the job with its schedule in words and last status.
// Imported by run.mjs; `t` holds its helpers. Screenshots (E2E_SHOTS set) at 1440 and 390 px, light and dark.
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { pageApi } from './page-api.mjs';
import { SHOTS_ON } from './shots.mjs';

export const SHOTS = process.env.JOBS_SHOTS ?? '/work/shots/jobs-web';

const step = (code, thought = 'Thought: On it.') => `${thought}\n<code>\n${code}\n</code>`;
const final = (expr) => step(`final_answer(${expr})`, 'Thought: I have the answer.');
// The two questions, as the backend's own job tests ask them (tests/api/jobs_support.py).
const QUESTIONS = [
  [
    'What is the total revenue?',
    [step("import pandas as pd\nsales = pd.read_csv('sales data.csv')\ntotal = float(sales['revenue'].sum())\nprint(total)"), final('round(total, 2)')],
  ],
  [
    'Which region earns most?',
    [step("by_region = sales.groupby('region', as_index=False)['revenue'].sum()\ndisplay(by_region)"), final("float(by_region['revenue'].max())")],
  ],
];
// The checks the model writes when the job is made.
const CHECKS = `\`\`\`python
import pandas as pd


def test_sales_has_the_columns_the_job_reads(params):
    sales = pd.read_csv(params["sales_data_csv"])
    missing = [c for c in ("region", "revenue") if c not in sales.columns]
    assert not missing, f"sales data.csv lacks the columns {missing}; the job reads them"


def test_revenue_has_no_missing_values(params):
    sales = pd.read_csv(params["sales_data_csv"])
    missing = int(sales["revenue"].isna().sum())
    assert missing == 0, f"sales.revenue has {missing} missing values; the job expects none"
\`\`\``;
const csv = (rows) => ['region,revenue', ...rows.map(([r, v]) => `${r},${v}`)].join('\n') + '\n';
const WEEK_1 = csv([
  ['North', 100],
  ['South', 80],
  ['East', 60],
  ['West', 40],
]); // total 280
const WEEK_2 = csv([
  ['North', 90],
  ['South', 60],
  ['East', 50],
  ['West', 40],
]); // total 240: down 14.3%
// The third week's file calls `revenue` `amount`: total 300, North earns most (130).
const RENAMED = ['region,amount', 'North,130', 'South,70', 'East,60', 'West,40'].join('\n') + '\n';
const SENTENCE = "sales data.csv lacks the columns ['revenue']; the job reads them";
const renamedColumn = (text) => text.replaceAll("'revenue'", "'amount'").replaceAll('"revenue"', '"amount"');

export async function jobsTests(t) {
  const { page, base, script, test, expect, ask, chooseTheme } = t;
  const api = pageApi(page);
  const runs = () => page.locator('[data-testid=run]');
  const finished = async (run) => run.and(page.locator('[data-status=succeeded], [data-status=failed]')).waitFor({ timeout: 180_000 });
  // `themes` null: the page's own theme only (a dialog hides the theme menu behind it).
  const shots = async (name, locate, themes = ['Light', 'Dark']) => {
    if (!SHOTS_ON) return;
    mkdirSync(SHOTS, { recursive: true });
    for (const theme of themes ?? ['System']) {
      await page.setViewportSize({ width: 1440, height: 900 });
      if (themes) await chooseTheme(page, theme);
      for (const [width, height] of [
        [1440, 900],
        [390, 844],
      ]) {
        await page.setViewportSize({ width, height });
        if (locate) await locate().scrollIntoViewIfNeeded();
        await page.waitForTimeout(500);
        await page.screenshot({ path: path.join(SHOTS, `${name}-${width}-${theme.toLowerCase()}.png`), fullPage: width < 768 });
      }
    }
    await page.setViewportSize({ width: 1440, height: 900 });
    if (themes) await chooseTheme(page, 'System');
  };
  const upload = async (content) => {
    await page.getByTestId('file-input').setInputFiles({ name: 'sales data.csv', mimeType: 'text/csv', buffer: Buffer.from(content) });
  };
  const history = () => page.getByTestId('job-run');
  const result = (run, name) => run.locator(`[data-testid=run-result][data-name=${name}]`);

  let projectId;
  let jobUrl;

  await test('jobs: a two-question session becomes a job in two clicks; its checks are written; Run now adds a run with its values', async () => {
    const project = (await api('POST', '/api/v1/projects', { name: 'Weekly sales' })).body;
    projectId = project.id;
    await page.goto(`${base}/projects/${projectId}`);
    await upload(WEEK_1);
    await page.locator('[data-testid=file-row][data-file="sales data.csv"]').waitFor();
    const session = (await api('POST', `/api/v1/projects/${projectId}/sessions`, { title: 'Revenue' })).body;
    await page.goto(`${base}/projects/${projectId}/sessions/${session.id}`);
    for (const [i, [question, replies]] of QUESTIONS.entries()) {
      await script(replies);
      await ask(question);
      await finished(runs().nth(i));
      expect((await runs().nth(i).getAttribute('data-status')) === 'succeeded', `question ${i + 1} succeeded: ${await runs().nth(i).innerText()}`);
    }

    // Click 1: the header's "Make this a job"; the dialog names the job after the session and takes both answers.
    await page.getByTestId('make-job').click();
    const dialog = page.getByTestId('make-job-dialog');
    await dialog.getByTestId('job-runs').waitFor();
    const title = await page.getByTestId('session-title').innerText();
    const named = await dialog.getByRole('textbox', { name: 'Name' }).inputValue();
    expect(named === title, `the job is named after the session: ${named} / ${title}`);
    await dialog.getByRole('textbox', { name: 'Name' }).fill('Revenue');
    const boxes = dialog.getByRole('checkbox');
    expect((await boxes.count()) === 2, 'both questions are listed');
    for (let i = 0; i < 2; i++) expect(await boxes.nth(i).isChecked(), `question ${i + 1} is chosen`);
    await shots('make-job-dialog', () => dialog, null);
    // Click 2: Create. The checks the model writes are scripted first.
    await script([CHECKS]);
    await dialog.getByRole('button', { name: 'Create job' }).click();
    await page.waitForURL(/\/jobs\/[0-9a-f-]+$/);
    jobUrl = page.url();
    await page.getByTestId('job-title').filter({ hasText: 'Revenue' }).waitFor();
    const checks = page.getByTestId('job-checks');
    expect(['writing', 'ready'].includes(await checks.getAttribute('data-status')), `the checks are being written: ${await checks.innerText()}`);
    await page.locator('[data-testid=job-checks][data-status=ready]').waitFor({ timeout: 240_000 });
    expect((await page.getByTestId('job-schedule').innerText()) === 'On demand', 'a new job runs on demand');
    await page.getByTestId('history-empty').waitFor();

    // Run now: the job reads the file, so its parameter comes with its default.
    await page.getByTestId('run-now').click();
    const params = page.getByTestId('run-params');
    expect((await params.getByRole('textbox').first().inputValue()) === 'sales data.csv', 'the file parameter defaults to the file');
    await params.getByRole('button', { name: 'Run' }).click();
    await history().first().waitFor();
    await page.locator('[data-testid=job-run][data-status=succeeded]').first().waitFor({ timeout: 180_000 });
    const run = history().first();
    const total = await result(run, 'answer_1').getByTestId('result-value').innerText();
    expect(total === '280', `the run's total revenue is 280: ${total}`);
    expect((await result(run, 'answer_2').getByTestId('result-value').innerText()) === '100', 'the top region earns 100');
    expect((await result(run, 'by_region').getByRole('table').innerText()).includes('North'), 'the table shows as a small table');
    const checked = await run.getByTestId('run-checks').innerText();
    expect(/Checks: (\d+) of \1 passed/.test(checked), `every check passed: ${checked}`);
  });

  await test('jobs: a % change alert is set and listed; a new file version runs with the change and the alert delivered', async () => {
    await page.getByRole('tab', { name: 'Alerts' }).click();
    await page.getByRole('button', { name: 'Add an alert' }).click();
    const form = page.getByTestId('alert-form');
    await form.getByLabel('When the result').selectOption('answer_1');
    await form.getByLabel(/Change in %/).fill('-10');
    await form.getByRole('button', { name: 'Save alert' }).click();
    await form.getByRole('alert').filter({ hasText: 'Choose where the alert goes' }).waitFor();
    await form.getByLabel(/Email/).fill('team@example.com');
    await form.getByRole('button', { name: 'Save alert' }).click();
    const listed = page.getByTestId('alert-condition');
    await listed.filter({ hasText: 'When answer_1 falls by 10% or more' }).waitFor();
    const saved = (await api('GET', jobUrl.replace(/.*\/jobs\//, '/api/v1/jobs/'))).body;
    expect(saved.alerts.length === 1 && saved.alerts[0].when === 'change_pct' && saved.alerts[0].value === -10, `the alert is saved: ${JSON.stringify(saved.alerts)}`);
    await shots('alerts', () => page.getByTestId('job-alerts'));

    // A new week's file, then another run: the total fell from 280 to 240.
    await page.goto(`${base}/projects/${projectId}`);
    await page.locator('[data-testid=file-row][data-file="sales data.csv"]').waitFor();
    await upload(WEEK_2);
    await page.getByTestId('replace-confirm').getByRole('button', { name: 'Upload as v2' }).click();
    for (let i = 0; ; i++) {
      const files = (await api('GET', `/api/v1/projects/${projectId}/files`)).body.items;
      if (files.some((f) => f.name === 'sales data.csv' && f.version === 2)) break;
      expect(i < 100, 'the new version was uploaded');
      await page.waitForTimeout(200);
    }
    await page.goto(jobUrl);
    await page.getByTestId('run-now').click();
    await page.getByTestId('run-params').getByRole('button', { name: 'Run' }).click();
    await page.locator('[data-testid=job-run]').nth(1).waitFor();
    await page.locator('[data-testid=job-run]').first().and(page.locator('[data-status=succeeded]')).waitFor({ timeout: 180_000 });
    const run = history().first();
    const change = result(run, 'answer_1').getByTestId('result-change');
    expect((await change.innerText()).includes('280 → 240'), `the change says before → after: ${await change.innerText()}`);
    expect((await change.getByTestId('result-pct').innerText()) === '\u221214.3%', `and by how much: ${await change.innerText()}`);
    expect((await change.getAttribute('data-direction')) === 'down', 'a fall reads as down');
    await run.getByTestId('run-deliveries').filter({ hasText: 'email' }).waitFor({ timeout: 60_000 });
    await shots('history', () => page.getByTestId('job-history'));
    // A run's details: its parameters and the delivery's target.
    await run.getByRole('button', { expanded: false }).first().click();
    const details = run.getByTestId('run-details');
    await details.waitFor();
    const said = await details.innerText();
    expect(said.includes('sales_data_csv') && said.includes('team@example.com'), `the details show its parameter and where the alert went: ${said}`);
  });

  await test('jobs: the code and its tests are shown; a schedule "every Monday 08:00" shows its next run; the Jobs page lists it', async () => {
    await page.getByRole('tab', { name: 'Code & tests' }).click();
    const code = page.getByTestId('job-code');
    await code.getByTestId('code').first().waitFor();
    const script0 = await code.getByTestId('code').first().innerText();
    expect(script0.includes('def run(params)') && script0.includes("read_csv(params['sales_data_csv'])"), `the script reads its parameter: ${script0.slice(0, 300)}`);
    expect((await code.getByTestId('code').nth(1).innerText()).includes('def test_revenue_has_no_missing_values'), 'the tests are shown');
    // The exports download under the server's names: a zip of the script and its tests, a notebook.
    for (const [button, ending] of [
      ['Script and tests (.zip)', '.zip'],
      ['Notebook (.ipynb)', '.ipynb'],
    ]) {
      const [download] = await Promise.all([page.waitForEvent('download'), code.getByRole('button', { name: button }).click()]);
      expect(download.suggestedFilename().endsWith(ending), `the ${ending} export downloads: ${download.suggestedFilename()}`);
    }
    await shots('code', () => code);

    await page.getByRole('tab', { name: 'Schedule' }).click();
    // An interval under five minutes: the server's reason shows where the form is.
    await page.getByRole('radio', { name: 'Every N minutes' }).click();
    await page.getByLabel(/Every \(minutes/).fill('1');
    await page.getByRole('button', { name: 'Save schedule' }).click();
    const refused = await page.getByTestId('job-schedule-tab').getByRole('alert').innerText();
    expect(/five minutes|5 minutes/i.test(refused), `the server's reason is shown: ${refused}`);
    await page.getByRole('radio', { name: /At set times/ }).click();
    await page.getByRole('button', { name: 'Every Monday 08:00' }).click();
    await page.getByLabel('Time zone').fill('Europe/Paris');
    await page.getByRole('button', { name: 'Save schedule' }).click();
    await page.getByTestId('schedule-now').filter({ hasText: 'Every Monday at 08:00 Europe/Paris' }).waitFor();
    const next = await page.getByTestId('schedule-next').innerText();
    expect(/in \d+ (days?|hours?|minutes?)|tomorrow/.test(next), `the next run is said: ${next}`);
    const nextAt = new Date((await page.getByTestId('schedule-next').locator('time').getAttribute('datetime')));
    const paris = new Intl.DateTimeFormat('en-GB', { timeZone: 'Europe/Paris', weekday: 'long', hour: '2-digit', minute: '2-digit' }).format(nextAt);
    expect(paris === 'Monday 08:00', `the next run is a Monday at 08:00 in Paris: ${paris}`);
    await shots('schedule', () => page.getByTestId('job-schedule-tab'));

    await page.goto(`${base}/projects/${projectId}`);
    await page.getByTestId('jobs-link').click();
    const row = page.getByTestId('job-row').first();
    await row.waitFor();
    expect((await row.getByTestId('job-schedule').innerText()) === 'Every Monday at 08:00 Europe/Paris', 'the list says the schedule in words');
    expect((await row.getByTestId('job-next-run').innerText()).startsWith('in '), `the next run: ${await row.getByTestId('job-next-run').innerText()}`);
    expect((await row.getByTestId('run-status').getAttribute('data-status')) === 'succeeded', 'the last run succeeded');
    await shots('jobs-list', () => page.getByTestId('jobs-list'));

    // Pause: the list marks it and the next run is no longer promised.
    await row.click();
    await page.getByTestId('pause-job').click();
    await page.getByTestId('job-title').getByTestId('job-paused').waitFor();
    await page.goto(`${base}/projects/${projectId}/jobs`);
    await page.getByTestId('job-row').first().getByTestId('job-paused').waitFor();
    expect((await page.getByTestId('job-next-run').first().innerText()) === '—', 'a paused job has no next run shown');
  });

  await test('jobs: a renamed column fails the run with the check\'s sentence; the model\'s repair is made, proposed with its diff, approved; the next run passes and the history says who approved it', async () => {
    const jobPath = new URL(jobUrl).pathname.replace(/.*\/jobs\//, '/api/v1/jobs/');
    // This week's file calls the column `amount`: the job's check on its columns fails.
    await page.goto(`${base}/projects/${projectId}`);
    await page.locator('[data-testid=file-row][data-file="sales data.csv"]').waitFor();
    await upload(RENAMED);
    await page.getByTestId('replace-confirm').getByRole('button', { name: 'Upload as v3' }).click();
    for (let i = 0; ; i++) {
      const files = (await api('GET', `/api/v1/projects/${projectId}/files`)).body.items;
      if (files.some((f) => f.name === 'sales data.csv' && f.version === 3)) break;
      expect(i < 100, 'the renamed version was uploaded');
      await page.waitForTimeout(200);
    }
    // The model's repair, as the backend's own repair test scripts it: first code that still reads
    // `revenue` (it fails in the sandbox and the failure goes back to the model), then the script
    // and the tests naming the column read `amount`. The first proposal also waits a few seconds
    // before it fails, so the repair is under way long enough for the page to be seen saying so
    // however fast the machine is (nothing here asserts how long anything takes).
    const code = (await api('GET', `${jobPath}/code`)).body;
    const slowAndWrong = code.script.replace(/(def run\(params[^\n]*\n)/, '$1    import time\n    time.sleep(8)\n').replaceAll('sum()', 'sum() * 1');
    expect(slowAndWrong.includes('time.sleep(8)'), `the first proposal waits: ${slowAndWrong.slice(0, 300)}`);
    const tests = code.tests.split('def test_results_pinned')[0];
    const proposal = (script) =>
      "NOTE: The column revenue is now called amount; the script and the check that names it read amount.\n" +
      `\`\`\`python job\n${script}\`\`\`\n\`\`\`python tests\n${renamedColumn(tests)}\`\`\`\n`;
    await script([], 0, [], [proposal(slowAndWrong), proposal(renamedColumn(code.script))]);

    await page.goto(jobUrl);
    const before = await history().count();
    await page.getByTestId('run-now').click();
    await page.getByTestId('run-params').getByRole('button', { name: 'Run' }).click();
    await history().nth(before).waitFor();
    await page.locator('[data-testid=job-run]').first().and(page.locator('[data-status=failed]')).waitFor({ timeout: 180_000 });
    const failed = history().first();
    const said = await failed.getByTestId('run-error').innerText();
    expect(said === SENTENCE, `the run failed with the check's sentence: ${said}`);
    // The repair is being made: the page says so, then shows it for approval.
    const making = page.getByTestId('repair-repairing');
    await making.waitFor({ timeout: 60_000 });
    expect((await making.innerText()).includes(SENTENCE), `the repair under way says what failed: ${await making.innerText()}`);
    expect((await failed.getByTestId('repair-outcome').getAttribute('data-status')) === 'repairing', 'the failed run shows its repair being made');
    await shots('repair-repairing', () => making, ['Light']);
    const banner = page.getByTestId('repair-banner');
    await banner.waitFor({ timeout: 240_000 });
    expect((await making.count()) === 0, 'the repair under way gives way to the proposal');
    expect((await banner.getByTestId('repair-reason').innerText()) === SENTENCE, 'the banner says what failed');
    expect((await banner.getByTestId('repair-note').innerText()).startsWith('The column revenue is now called amount'), "the model's note is shown");
    const diff = banner.getByTestId('repair-diff');
    const added = diff.locator('div', { hasText: /^\+.*'amount'/ }).first();
    const removed = diff.locator('div', { hasText: /^-.*'revenue'/ }).first();
    expect((await added.getAttribute('class')).includes('emerald'), `a line reading amount is added, green: ${await diff.innerText()}`);
    expect((await removed.getAttribute('class')).includes('destructive'), 'a line reading revenue is removed, red');
    const checks = await banner.getByTestId('repair-checks').innerText();
    expect(checks.includes('test_sales_has_the_columns_the_job_reads') && (await banner.getByTestId('repair-checks').locator('.text-destructive').count()) === 0, `the checks it passed are listed: ${checks}`);
    await shots('repair-banner', () => banner);

    // Approve: the job runs the new code; the next run passes with this week's values.
    await banner.getByRole('button', { name: 'Approve' }).click();
    await page.getByText('Repair approved').first().waitFor();
    await banner.waitFor({ state: 'detached' });
    const outcome = history().first().getByTestId('repair-outcome');
    await outcome.and(page.locator('[data-status=applied]')).waitFor();
    const me = (await api('GET', '/api/v1/auth/me')).body;
    const by = await outcome.getByTestId('repair-decided-by').innerText();
    expect(by.startsWith(`by ${me.email}`), `the history says who approved it: ${by}`);
    expect((await outcome.innerText()).includes('Repair applied'), 'and that it is applied');
    await page.getByTestId('run-now').click();
    await page.getByTestId('run-params').getByRole('button', { name: 'Run' }).click();
    await history().nth(before + 1).waitFor();
    await page.locator('[data-testid=job-run]').first().and(page.locator('[data-status=succeeded]')).waitFor({ timeout: 180_000 });
    const passed = history().first();
    expect((await result(passed, 'answer_1').getByTestId('result-value').innerText()) === '300', `the repaired run's total is 300: ${await passed.innerText()}`);
    expect((await result(passed, 'answer_2').getByTestId('result-value').innerText()) === '130', 'the top region earns 130');
    const checked = await passed.getByTestId('run-checks').innerText();
    expect(/Checks: (\d+) of \1 passed/.test(checked), `every check passed: ${checked}`);
    await shots('repair-history', () => page.getByTestId('job-history'));

    // Deciding again: the server's 409 said in words.
    const again = await api('POST', `${jobPath}/repairs/${(await api('GET', `${jobPath}/repairs`)).body.items[0].id}/approval`, { decision: 'approve' });
    expect(again.status === 409 && again.body.code === 'repair_not_pending', `a decided repair is not decided again: ${JSON.stringify(again)}`);
  });
}
