// The browser flow of files read right (issue 42, points 1-3): a workbook whose Amount mixes numbers
// and "€22,729.58" texts and whose Order date mixes dates and "02/07/2025" texts previews numbers
// right-aligned and dates as dates, says how it read them and marks the cells it could not read; a
// late page shows each column as page 1 does; a filter counts its matching rows over the whole file;
// the dataset list shows rows, columns and sheets. Imported by run.mjs; `t` holds its helpers.
import { spawnSync } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { SHOTS_ON } from './shots.mjs';

const BACKEND = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..', 'backend');
export const SHOTS = process.env.FILES_SHOTS ?? '/work/shots/files';

// The backend tests' mixed workbook (tests/support/mixed_files.py), written by its own openpyxl.
function mixedWorkbook() {
  const code = 'import sys\nfrom tests.support.mixed_files import mixed_workbook\nsys.stdout.buffer.write(mixed_workbook(400))';
  const out = spawnSync('uv', ['run', 'python', '-c', code], { cwd: BACKEND, maxBuffer: 1 << 22 });
  if (out.status !== 0) throw new Error(`could not write the workbook: ${out.stderr}`);
  return out.stdout;
}

export async function filesTests(t) {
  const { page, base, test, expect, chooseTheme } = t;
  mkdirSync(SHOTS, { recursive: true });
  const wide = { width: 1440, height: 900 };
  const narrow = { width: 390, height: 844 };
  // Each visual point at both widths, light and dark.
  const shots = async (name) => {
    if (!SHOTS_ON) return;
    for (const theme of ['light', 'dark']) {
      await page.setViewportSize(wide);
      await chooseTheme(page, theme === 'dark' ? 'Dark' : 'Light');
      for (const [size, viewport] of [
        ['1440', wide],
        ['390', narrow],
      ]) {
        await page.setViewportSize(viewport);
        await page.waitForTimeout(250);
        await page.screenshot({ path: path.join(SHOTS, `${name}-${size}-${theme}.png`) });
      }
    }
    await page.setViewportSize(wide);
    await chooseTheme(page, 'Light');
  };
  const api = (method, url, body) =>
    page.evaluate(
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
  const row = () => page.locator('[data-testid=file-row][data-file="orders.xlsx"]');
  const table = () => row().getByTestId('data-table');
  // The cells of a column on the page shown, as the page shows them.
  const cells = async (at) => {
    // A page asked for shows the previous rows until its own arrive (aria-busy).
    await row().locator('[data-testid=data-table][aria-busy=false]').waitFor();
    return table().locator(`tbody tr td:nth-child(${at})`).allInnerTexts();
  };
  const DATE = /^\d{4}-\d{2}-\d{2}$/;
  // Amounts in one currency show with it and the column's usual decimals (issue 42's last gaps).
  const AMOUNT = /^-?€\d{1,3}(,\d{3})*\.\d{2}$/;
  const number = (a) => Number(a.replace(/[€,]/g, ''));

  await test('files: a workbook that mixes kinds previews numbers and dates, says how it read them, and lists its rows, columns and sheets', async () => {
    const project = (await api('POST', '/api/v1/projects', { name: 'Orders ledger' })).body;
    await page.goto(`${base}/projects/${project.id}`);
    await page.getByTestId('project-title').filter({ hasText: 'Orders ledger' }).waitFor();
    await page.getByTestId('file-input').setInputFiles({
      name: 'orders.xlsx',
      mimeType: 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet',
      buffer: mixedWorkbook(),
    });
    const meta = row().getByTestId('file-table');
    await meta.waitFor();
    expect((await meta.innerText()).includes('400 rows · 4 columns · 1 sheet'), `the list shows the table's size: ${await meta.innerText()}`);
    await row().getByRole('button', { expanded: false }).first().click();
    await table().getByTestId('unreadable-cell').first().waitFor();
    const types = await table().getByTestId('column-type').allInnerTexts();
    expect(types[1].startsWith('date · day-first') && types[2].startsWith('number'), `the columns are a date and a number: ${JSON.stringify(types)}`);
    const readings = await row().getByTestId('column-readings').innerText();
    expect(readings.includes('Order date: dates read day-first (from 13/01/2025); 2 cells could not be read'), `the reading is said: ${readings}`);
    expect(readings.includes('Amount: numbers and amounts read as numbers; 1 cell could not be read'), `the amounts' reading is said: ${readings}`);
    const dates = await cells(2);
    const amounts = await cells(3);
    expect(dates[0] === '2025-01-01' && dates[3] === '2025-01-04', `a date text reads as the date it is: ${dates.slice(0, 4)}`);
    expect(dates.filter((d) => d !== 'soon').every((d) => DATE.test(d)), `every date of page 1 is a date: ${dates}`);
    expect(amounts[0] === '€1,000.00' && amounts[5] === '-€1,200.00', `an amount text reads as its number: ${amounts.slice(0, 6)}`);
    expect(amounts[1] === '€1,037.13' && amounts[2] === '€1,074.26', `a real number shows as an amount too: ${amounts.slice(0, 3)}`);
    expect(amounts.filter((a) => a !== 'ask Bob').every((a) => AMOUNT.test(a)), `every amount of page 1 is a € amount: ${amounts}`);
    const amountCell = table().locator('tbody tr td:nth-child(3)').first();
    expect((await amountCell.evaluate((el) => getComputedStyle(el).textAlign)) === 'right', 'numbers are right-aligned');
    const soon = table().getByTestId('unreadable-cell').filter({ hasText: 'soon' });
    await soon.waitFor();
    const title = await soon.locator('xpath=..').getAttribute('title');
    expect(title === '“soon” could not be read as a date: shown as written', `the unread cell says why: ${title}`);
    await soon.scrollIntoViewIfNeeded();
    await shots('01-mixed-workbook');
  });

  await test('files: a late page shows each column as page 1 does', async () => {
    for (let i = 0; i < 7; i++) {
      await table().getByLabel('Next page').click();
      await table().getByTestId('page-indicator').filter({ hasText: `Page ${i + 2} of 8` }).waitFor();
    }
    await table().getByTestId('row-range').filter({ hasText: 'Rows 351–400 of 400' }).waitFor();
    await table().getByTestId('unreadable-cell').filter({ hasText: 'tbd' }).waitFor();
    const dates = await cells(2);
    const amounts = await cells(3);
    expect(dates.filter((d) => d !== 'tbd').every((d) => DATE.test(d)), `every date of page 8 is a date: ${dates}`);
    expect(dates.includes('tbd') && !dates.some((d) => d.includes('"') || d.includes('T')), `page 8 has no quoted timestamps: ${dates}`);
    expect(amounts.every((a) => AMOUNT.test(a)), `every amount of page 8 is a € amount as on page 1: ${amounts}`);
    await table().getByTestId('unreadable-cell').filter({ hasText: 'tbd' }).waitFor();
    await shots('02-late-page');
  });

  await test('files: a filter keeps the matching rows of the whole file and counts them, kept while paging', async () => {
    await table().getByLabel('First page').click();
    await row().getByLabel('Filter by Amount').click();
    const form = row().getByTestId('condition-form');
    await form.getByLabel('Condition on Amount').selectOption('gt');
    await form.getByLabel('Value for Amount').fill('10000');
    await shots('03-condition-menu');
    await form.getByRole('button', { name: 'Apply' }).click();
    const count = row().getByTestId('filter-count');
    await count.filter({ hasText: '157 of 400 rows match' }).waitFor();
    expect((await row().getByTestId('filter-chip').innerText()).includes('Amount > 10000'), 'the chip says the condition');
    const amounts = (await cells(3)).map(number);
    expect(amounts.every((a) => a > 10000), `only amounts over 10,000 are shown: ${amounts}`);
    await table().getByLabel('Next page').click();
    await table().getByTestId('row-range').filter({ hasText: 'Rows 51–100 of 157 matching' }).waitFor();
    expect((await cells(3)).every((a) => number(a) > 10000), 'page 2 keeps the filter');
    await row().getByLabel('Filter by Region').click();
    await row().getByTestId('condition-form').getByLabel('Value for Region').fill('n');
    await row().getByTestId('condition-form').getByRole('button', { name: 'Apply' }).click();
    await count.filter({ hasText: '39 of 400 rows match' }).waitFor();
    const regions = await cells(4);
    expect(regions.every((r) => r === 'N'), `contains is case-blind over the file: ${regions}`);
    await shots('04-filtered');
    await row().getByRole('button', { name: 'Clear all' }).click();
    await row().getByTestId('filter-chips').waitFor({ state: 'detached' });
    await table().getByTestId('row-range').filter({ hasText: 'of 400' }).waitFor();
  });

  await test('files: an amount filter takes the amount as shown, and the profile counts unreadable cells apart from empty ones', async () => {
    await row().getByLabel('Filter by Amount').click();
    const form = row().getByTestId('condition-form');
    await form.getByLabel('Condition on Amount').selectOption('eq');
    await form.getByLabel('Value for Amount').fill('€1,037.13');
    await form.getByRole('button', { name: 'Apply' }).click();
    await row().getByTestId('filter-count').filter({ hasText: '1 of 400 rows match' }).waitFor();
    expect((await cells(3))[0] === '€1,037.13', 'the amount typed as shown is found');
    await row().getByRole('button', { name: 'Clear all' }).click();
    await row().getByTestId('filter-chips').waitFor({ state: 'detached' });
    await row().getByRole('tab', { name: 'Columns' }).click();
    const missing = (name) => row().locator(`[data-testid=profile] tr[data-column="${name}"] [data-testid=profile-missing]`);
    await missing('Amount').waitFor();
    const amount = await missing('Amount').innerText();
    const dates = await missing('Order date').innerText();
    expect(amount.startsWith('1 unreadable, 0 empty'), `the Amount's profile counts its unreadable cell apart: ${amount}`);
    expect(dates.startsWith('2 unreadable, 0 empty'), `the Order date's profile counts its unreadable cells apart: ${dates}`);
    if (process.env.E2E_SHOTS) await shots('05-profile-unreadable');
    await row().getByRole('tab', { name: 'Rows' }).click();
  });
}
