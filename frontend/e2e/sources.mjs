// The schema browser's sample rows and unknown row counts (issue 42, "Smaller"): a SQLite source
// with a table and a view; the view's row count reads "rows unknown", the table opens on its
// columns and shows its first rows when asked. Imported by run.mjs; `t` holds its helpers.
import { spawnSync } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { pageApi } from './page-api.mjs';
import { SHOTS_ON, snap } from './shots.mjs';

export const SHOTS = process.env.SOURCES_SHOTS ?? '/work/shots/sources';

export async function sourcesTests(t) {
  const { page, base, test, expect, sourcesDir, backend, chooseTheme } = t;
  mkdirSync(SHOTS, { recursive: true });
  const shot = (name) => snap(page, path.join(SHOTS, `${name}.png`), { fullPage: false });
  const wide = { width: 1440, height: 900 };
  const narrow = { width: 390, height: 844 };
  // The API as the page's signed-in user.
  const api = pageApi(page);
  const DB = path.join(sourcesDir, 'browse.db');
  let browse; // the project of the tests below
  const python = (code) => {
    const out = spawnSync('uv', ['run', 'python', '-c', `import sqlite3\ndb = sqlite3.connect(${JSON.stringify(DB)})\n${code}`], { cwd: backend });
    if (out.status !== 0) throw new Error(`the browse database: ${out.stderr}`);
  };

  await test('sources: a table shows its sample rows; a row count the database does not keep reads "rows unknown"', async () => {
    python(
      [
        "db.execute('CREATE TABLE orders (id INTEGER PRIMARY KEY, region TEXT NOT NULL, amount REAL NOT NULL, ordered_on TEXT)')",
        "db.executemany('INSERT INTO orders VALUES (?, ?, ?, ?)', [(i, ['east', 'north', 'south'][i % 3], 12.5 * i, f'2026-03-{i:02d}') for i in range(1, 31)])",
        "db.execute('CREATE VIEW big_orders AS SELECT * FROM orders WHERE amount > 200')",
        'db.commit()',
      ].join('\n'),
    );
    const project = (await api('POST', '/api/v1/projects', { name: 'Browsing' })).body;
    const added = await api('POST', `/api/v1/projects/${project.id}/sources`, { name: 'browse', url: `sqlite:///${DB}` });
    expect(added.status === 201 && added.body.status === 'ready', `the source is ready: ${JSON.stringify(added.body)}`);
    await page.setViewportSize(wide);
    await page.goto(`${base}/projects/${project.id}`);
    const row = page.locator('[data-testid=source-row][data-source=browse]');
    await row.waitFor();
    if ((await row.getByRole('button', { name: 'Show the tables of browse' }).count()) > 0) await row.getByRole('button', { name: 'Show the tables of browse' }).click();
    const view = row.locator('[data-testid=schema-table][data-table="main.big_orders"]');
    const orders = row.locator('[data-testid=schema-table][data-table="main.orders"]');
    await view.waitFor();
    const unknown = await view.getByTestId('row-estimate').innerText();
    expect(unknown === 'rows unknown', `a view's row count is unknown, not 0 or -1: ${unknown}`);
    const counted = await orders.getByTestId('row-estimate').innerText();
    expect(counted === '~30 rows', `a counted table says its rows: ${counted}`);

    await orders.getByRole('button', { name: 'Show the columns of main.orders' }).click();
    await orders.getByTestId('schema-columns').waitFor();
    await orders.getByRole('radio', { name: 'Sample rows' }).click();
    const sample = orders.getByTestId('table-sample');
    await sample.waitFor();
    const count = await sample.getByTestId('sample-count').innerText();
    expect(count === 'The first 20 rows', `the sample says how many rows it shows: ${count}`);
    const headers = await sample.getByRole('columnheader').allInnerTexts();
    expect(/^id\s*INTEGER$/.test(headers[0]) && /^amount\s*REAL$/.test(headers[2]), `the columns with the schema's types: ${JSON.stringify(headers)}`);
    const first = await sample.getByRole('row').nth(1).getByRole('cell').allInnerTexts();
    expect(JSON.stringify(first) === '["1","north","12.5","2026-03-01"]', `the first row as the database has it: ${JSON.stringify(first)}`);
    expect((await sample.getByRole('row').count()) === 21, 'a header and 20 rows');

    // Screenshots only (E2E_SHOTS): the sample at both widths, light and dark.
    if (SHOTS_ON) {
      const place = async () => {
        await orders.evaluate((el) => el.scrollIntoView({ block: 'start' }));
        await page.waitForTimeout(300);
      };
      await place();
      await shot('sample-rows-1440-light');
      await chooseTheme(page, 'Dark');
      await place();
      await shot('sample-rows-1440-dark');
      await page.setViewportSize(narrow);
      await place();
      await shot('sample-rows-390-dark');
      await page.setViewportSize(wide);
      await chooseTheme(page, 'Light');
      await page.setViewportSize(narrow);
      await place();
      await shot('sample-rows-390-light');
      await view.evaluate((el) => el.scrollIntoView({ block: 'center' }));
      await page.waitForTimeout(200);
      await shot('rows-unknown-390-light');
      await page.setViewportSize(wide);
      await view.evaluate((el) => el.scrollIntoView({ block: 'center' }));
      await page.waitForTimeout(200);
      await shot('rows-unknown-1440-light');
    }

    // Back on the columns: the sample is a view of the table, not a place of its own.
    await orders.getByRole('radio', { name: 'Columns' }).click();
    await orders.getByTestId('schema-columns').waitFor();
    browse = project;
  });

  await test("sources: the database's own comments describe a table and its columns, marked, until the team writes its own", async () => {
    const file = path.join(sourcesDir, 'warehouse.duckdb');
    const out = spawnSync(
      'uv',
      [
        'run',
        'python',
        '-c',
        [
          'import duckdb',
          `con = duckdb.connect(${JSON.stringify(file)})`,
          "con.execute(\"CREATE TABLE sales (day DATE, store VARCHAR, takings DECIMAL(10, 2))\")",
          "con.execute(\"INSERT INTO sales VALUES ('2026-03-01', 'Lyon', 1250.5), ('2026-03-01', 'Metz', 980)\")",
          "con.execute(\"COMMENT ON TABLE sales IS 'One row per store and day, from the tills'\")",
          "con.execute(\"COMMENT ON COLUMN sales.takings IS 'Takings in EUR, VAT included'\")",
          'con.close()',
        ].join('\n'),
      ],
      { cwd: backend },
    );
    if (out.status !== 0) throw new Error(`the warehouse file: ${out.stderr}`);
    const added = await api('POST', `/api/v1/projects/${browse.id}/sources`, { name: 'warehouse', url: `duckdb:///${file}` });
    expect(added.status === 201 && added.body.status === 'ready', `the DuckDB source is ready: ${JSON.stringify(added.body)}`);
    await page.setViewportSize(wide);
    await page.goto(`${base}/projects/${browse.id}`);
    const row = page.locator('[data-testid=source-row][data-source=warehouse]');
    await row.waitFor();
    if ((await row.getByRole('button', { name: 'Show the tables of warehouse' }).count()) > 0) await row.getByRole('button', { name: 'Show the tables of warehouse' }).click();
    const sales = row.locator('[data-testid=schema-table][data-table="main.sales"]');
    await sales.getByRole('button', { name: 'Show the columns of main.sales' }).click();
    const said = await sales.getByTestId('description').allInnerTexts();
    expect(
      JSON.stringify(said.map((s) => s.replace(/\s+/g, ' ').trim())) ===
        JSON.stringify(['One row per store and day, from the tills DB comment', 'Add a description', 'Add a description', 'Takings in EUR, VAT included DB comment']),
      `the comments show as descriptions, marked: ${JSON.stringify(said)}`,
    );
    // Screenshots only (E2E_SHOTS): the described columns at both widths, light and dark.
    if (SHOTS_ON) {
      const place = async () => {
        await sales.evaluate((el) => el.scrollIntoView({ block: 'start' }));
        await page.waitForTimeout(300);
      };
      await place();
      await shot('db-comments-1440-light');
      await page.setViewportSize(narrow);
      await place();
      await shot('db-comments-390-light');
      await page.setViewportSize(wide);
      await chooseTheme(page, 'Dark');
      await place();
      await shot('db-comments-1440-dark');
      await page.setViewportSize(narrow);
      await place();
      await shot('db-comments-390-dark');
      await page.setViewportSize(wide);
      await chooseTheme(page, 'Light');
    }

    // The team's own words win; the mark goes with the comment.
    await sales.getByRole('button', { name: 'Edit the description of main.sales.takings' }).click();
    const box = sales.getByLabel('Description of main.sales.takings');
    await box.fill('Gross takings in euros');
    await box.press('Enter');
    const edited = sales.getByRole('button', { name: 'Edit the description of main.sales.takings' });
    await edited.filter({ hasText: 'Gross takings in euros' }).waitFor();
    expect((await edited.getByTestId('from-database').count()) === 0, "the team's description carries no DB comment mark");
  });
}
