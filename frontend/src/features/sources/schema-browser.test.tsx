import { QueryClient, QueryClientProvider } from '@tanstack/react-query';
import { fireEvent, render, screen, waitFor, within } from '@testing-library/react';
import { beforeEach, describe, expect, it, vi } from 'vitest';
import { describeSchema, sampleTable, type SchemaOut, type SourceOut, type TableOut } from '@/client';
import { ApiError } from '@/lib/api';
import { sourceKeys } from './queries';
import { filterTables, SCHEMA_PAGE, SchemaBrowser, truncatedSentence } from './schema-browser';

vi.mock('@/client', async (original) => ({
  ...(await original<typeof import('@/client')>()),
  describeSchema: vi.fn(),
  sampleTable: vi.fn(),
}));
const describe_ = vi.mocked(describeSchema);
const sample_ = vi.mocked(sampleTable);

const table = (name: string, over: Partial<TableOut> = {}): TableOut => ({
  schema: 'main',
  name,
  description: '',
  row_estimate: 120,
  columns: [
    { name: 'id', type: 'INTEGER', nullable: false, description: '' },
    { name: 'region', type: 'TEXT', nullable: true, description: '' },
  ],
  ...over,
});

const source = { id: 's', name: 'shop', status: 'ready', table_count: 3000 } as SourceOut;

function show(schema: SchemaOut) {
  const qc = new QueryClient({ defaultOptions: { queries: { staleTime: Infinity, retry: false } } });
  qc.setQueryData(sourceKeys.schema('s'), schema);
  render(
    <QueryClientProvider client={qc}>
      <SchemaBrowser source={source} />
    </QueryClientProvider>,
  );
  return qc;
}

const many = Array.from({ length: 3000 }, (_, i) => table(`t_${String(i).padStart(4, '0')}`));

beforeEach(() => {
  describe_.mockReset();
  sample_.mockReset();
});

describe('SchemaBrowser', () => {
  it('pages thousands of tables, and filters them by table or column name', () => {
    show({ tables: many, truncated: false, checked_at: null });
    expect(screen.getAllByTestId('schema-table')).toHaveLength(SCHEMA_PAGE);
    expect(screen.getByTestId('schema-count').textContent).toBe('3,000 tables');
    fireEvent.click(screen.getByRole('button', { name: 'Show 50 more' }));
    expect(screen.getAllByTestId('schema-table')).toHaveLength(2 * SCHEMA_PAGE);
    fireEvent.change(screen.getByLabelText('Filter the tables of shop'), { target: { value: 't_29' } });
    expect(screen.getAllByTestId('schema-table')).toHaveLength(50);
    expect(screen.getByTestId('schema-count').textContent).toBe('100 of 3,000 tables');
    fireEvent.change(screen.getByLabelText('Filter the tables of shop'), { target: { value: 't_2999' } });
    expect(screen.getAllByTestId('schema-table').map((t) => t.dataset.table)).toEqual(['main.t_2999']);
    fireEvent.change(screen.getByLabelText('Filter the tables of shop'), { target: { value: 'nothing' } });
    expect(screen.getByText('No table or column matches “nothing”.')).toBeTruthy();
  });

  it('shows a table with its row estimate, opens it on its columns', () => {
    show({ tables: [table('orders')], truncated: false, checked_at: null });
    const t = screen.getByTestId('schema-table');
    expect(within(t).getByTestId('row-estimate').textContent).toBe('~120 rows');
    fireEvent.click(within(t).getByRole('button', { name: 'Show the columns of main.orders' }));
    const columns = within(t).getAllByTestId('schema-column');
    expect(columns.map((c) => c.dataset.column)).toEqual(['id', 'region']);
    expect(columns[0].textContent).toContain('INTEGER');
  });

  it('saves a column description in the data dictionary, and says why when it cannot', async () => {
    const described = table('orders', {
      columns: [
        { name: 'id', type: 'INTEGER', nullable: false, description: '' },
        { name: 'region', type: 'TEXT', nullable: true, description: 'Sales region, lower case' },
      ],
    });
    describe_.mockRejectedValueOnce(new ApiError(404, 'No such source.', 'source_not_found'));
    describe_.mockResolvedValueOnce({ data: { tables: [described], truncated: false, checked_at: null } } as never);
    show({ tables: [table('orders')], truncated: false, checked_at: null });
    fireEvent.click(screen.getByRole('button', { name: 'Show the columns of main.orders' }));
    fireEvent.click(screen.getByRole('button', { name: 'Describe main.orders.region' }));
    const box = screen.getByLabelText('Description of main.orders.region');
    fireEvent.change(box, { target: { value: 'Sales region, lower case' } });
    fireEvent.keyDown(box, { key: 'Enter' });
    expect((await screen.findByRole('alert')).textContent).toBe('No such source.');
    fireEvent.click(screen.getByRole('button', { name: 'Save' }));
    await screen.findByRole('button', { name: 'Edit the description of main.orders.region' });
    expect(describe_.mock.calls[1][0]).toEqual({
      path: { source_id: 's' },
      body: { tables: [{ schema: 'main', name: 'orders', columns: [{ name: 'region', description: 'Sales region, lower case' }] }] },
    });
  });

  it('saves a table description; Escape gives up', async () => {
    describe_.mockResolvedValue({ data: { tables: [table('orders', { description: 'One row per order' })], truncated: false, checked_at: null } } as never);
    show({ tables: [table('orders')], truncated: false, checked_at: null });
    fireEvent.click(screen.getByRole('button', { name: 'Describe main.orders' }));
    fireEvent.keyDown(screen.getByLabelText('Description of main.orders'), { key: 'Escape' });
    expect(describe_).not.toHaveBeenCalled();
    fireEvent.click(screen.getByRole('button', { name: 'Describe main.orders' }));
    fireEvent.change(screen.getByLabelText('Description of main.orders'), { target: { value: 'One row per order' } });
    fireEvent.click(screen.getByRole('button', { name: 'Save' }));
    await waitFor(() => expect(screen.getByTestId('description').textContent).toBe('One row per order'));
    expect(describe_.mock.calls[0][0].body).toEqual({ tables: [{ schema: 'main', name: 'orders', description: 'One row per order' }] });
  });

  it('says in words when the schema was cut short', () => {
    show({ tables: many.slice(0, 2000), truncated: true, checked_at: null });
    expect(screen.getByTestId('schema-truncated').textContent).toBe(truncatedSentence(2000, 3000));
    expect(truncatedSentence(2000, 3000)).toContain('the first 2,000 tables of its 3,000 are listed');
  });

  it('filters on every word, in the name, the description or a column', () => {
    const tables = [table('orders', { description: 'Sales orders' }), table('customers')];
    expect(filterTables(tables, 'sales').map((t) => t.name)).toEqual(['orders']);
    expect(filterTables(tables, 'REGION main').map((t) => t.name)).toEqual(['orders', 'customers']);
    expect(filterTables(tables, '  ')).toBe(tables);
  });

  it('says "rows unknown" where the database keeps no count, never 0 or -1', () => {
    show({ tables: [table('fresh', { row_estimate: null }), table('empty', { row_estimate: 0 })], truncated: false, checked_at: null });
    const [fresh, empty] = screen.getAllByTestId('row-estimate');
    expect(fresh.textContent).toBe('rows unknown');
    expect(fresh.title).toContain('keeps no row count');
    expect(empty.textContent).toBe('~0 rows');
  });

  it("marks a description that is the database's own comment, not the team's", () => {
    const commented = table('orders', {
      description: 'One row per order',
      description_source: 'database',
      columns: [
        { name: 'id', type: 'INTEGER', nullable: false, description: 'Order number', description_source: 'team' },
        { name: 'amount', type: 'NUMERIC', nullable: true, description: 'Net, EUR', description_source: 'database' },
      ],
    });
    show({ tables: [commented], truncated: false, checked_at: null });
    const t = screen.getByTestId('schema-table');
    fireEvent.click(within(t).getByRole('button', { name: 'Show the columns of main.orders' }));
    const [own, id, amount] = within(t).getAllByTestId('description');
    expect(own.textContent).toBe('One row per order DB comment');
    expect(id.textContent).toBe('Order number');
    expect(amount.textContent).toBe('Net, EUR DB comment');
    expect(within(t).getAllByTestId('from-database')).toHaveLength(2);
  });

  it("shows a table's sample rows when asked, and the database's sentence when they cannot be read", async () => {
    sample_.mockResolvedValueOnce({
      data: {
        schema: 'main',
        table: 'orders',
        columns: [
          { name: 'id', type: 'int64' },
          { name: 'region', type: 'string' },
        ],
        rows: [
          [1, 'north'],
          [2, null],
        ],
        limit: 20,
      },
    } as never);
    show({ tables: [table('orders'), table('broken')], truncated: false, checked_at: null });
    fireEvent.click(screen.getByRole('button', { name: 'Show the columns of main.orders' }));
    expect(sample_).not.toHaveBeenCalled();
    fireEvent.click(screen.getByRole('radio', { name: 'Sample rows' }));
    const shown = await screen.findByTestId('table-sample');
    expect(sample_.mock.calls[0][0]).toEqual({ path: { source_id: 's' }, query: { schema: 'main', table: 'orders', limit: 20 } });
    expect(within(shown).getByTestId('sample-count').textContent).toBe('All 2 rows');
    const cells = within(shown)
      .getAllByRole('row')
      .slice(1)
      .map((r) => within(r).getAllByRole('cell').map((c) => c.textContent));
    expect(cells).toEqual([
      ['1', 'north'],
      ['2', ''],
    ]);
    // The schema's own type names head the columns.
    expect(within(shown).getAllByRole('columnheader')[0].textContent).toContain('INTEGER');

    sample_.mockRejectedValueOnce(new ApiError(409, 'PostgreSQL: permission denied for table broken', 'sample_failed'));
    fireEvent.click(screen.getByRole('button', { name: 'Show the columns of main.broken' }));
    fireEvent.click(screen.getAllByRole('radio', { name: 'Sample rows' })[1]);
    expect((await screen.findByTestId('sample-error')).textContent).toBe('Could not read the rows: PostgreSQL: permission denied for table broken');
  });
});
