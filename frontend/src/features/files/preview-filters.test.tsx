import { QueryClient, QueryClientProvider } from '@tanstack/react-query';
import { fireEvent, render, screen, waitFor, within } from '@testing-library/react';
import { beforeEach, describe, expect, it, vi } from 'vitest';
import { previewFile, type FileOut, type FilePreview, type FilterCondition, type PreviewFileData } from '@/client';
import { describeTable } from './dataset-panel';
import { FileDetails } from './file-details';
import { describeCondition, opsFor } from './preview-filters';
import { previewCell, typeLabel } from './preview-table';

vi.mock('@/client', async (original) => ({
  ...(await original<typeof import('@/client')>()),
  previewFile: vi.fn(),
  profileFile: vi.fn(),
}));

const file: FileOut = {
  id: 'f',
  project_id: 'p',
  name: 'orders.xlsx',
  size: 4096,
  content_type: 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet',
  sha256: 's',
  version: 1,
  created_at: '2026-01-01T10:00:00Z',
  updated_at: '2026-01-01T10:00:00Z',
  check: 'ok',
  problem: null,
  table: { rows: 120, columns: 3, sheets: ['Orders'] },
};

const amounts = Array.from({ length: 120 }, (_, i) => 1000 + i * 100);
const columns: FilePreview['columns'] = [
  {
    name: 'Order date',
    dtype: 'datetime64[ns]',
    type: 'date',
    mixed: 'date',
    day_first: true,
    settled_by: '13/02/2025',
    unreadable: 1,
    reading: 'dates read day-first (from 13/02/2025); 1 cell could not be read',
  },
  { name: 'Amount', dtype: 'float64', type: 'number', mixed: 'number', reading: 'numbers and amounts read as numbers' },
  { name: 'Region', dtype: 'str', type: 'text' },
];

/** A server that filters every row: Amount's gt and Region's contains, counting the matching rows. */
function server(options?: PreviewFileData) {
  const q = options?.query ?? {};
  const filter: FilterCondition[] = q.filter ? JSON.parse(q.filter) : [];
  let kept = [...amounts.keys()];
  for (const c of filter) {
    if (c.column === 'Amount' && c.op === 'gt') kept = kept.filter((i) => amounts[i] > Number(c.value));
    if (c.column === 'Region' && c.op === 'contains') kept = kept.filter((i) => ['North', 'South'][i % 2].toLowerCase().includes(String(c.value)));
  }
  const offset = q.offset ?? 0;
  const page: FilePreview = {
    columns,
    rows: kept
      .slice(offset, offset + (q.limit ?? 50))
      .map((i) => [i === 3 ? { unreadable: 'soon' } : `2025-02-${String((i % 28) + 1).padStart(2, '0')}`, amounts[i], ['North', 'South'][i % 2]]),
    row_count: kept.length,
    unfiltered_row_count: 120,
    filter,
    sheets: ['Orders'],
    sheet: 'Orders',
  };
  return Promise.resolve({ data: page });
}

function renderDetails() {
  const client = new QueryClient({ defaultOptions: { queries: { retry: false } } });
  return render(
    <QueryClientProvider client={client}>
      <FileDetails file={file} />
    </QueryClientProvider>,
  );
}

describe('filters in the preview', () => {
  beforeEach(() => {
    vi.mocked(previewFile).mockReset();
    vi.mocked(previewFile).mockImplementation(server as never);
  });

  it('shows how a mixed column was read and marks a cell that could not be', async () => {
    renderDetails();
    const readings = await screen.findByTestId('column-readings');
    expect(readings.textContent).toContain('Order date: dates read day-first (from 13/02/2025); 1 cell could not be read');
    const marked = await screen.findByTestId('unreadable-cell');
    expect(marked.textContent).toContain('soon');
    expect(marked.closest('td')!.getAttribute('title')).toBe('“soon” could not be read as a date: shown as written');
    expect(typeLabel(columns[0])).toBe('date · day-first');
    expect(previewCell({ unreadable: 'tbd' }, columns[0])).toBe('tbd');
  });

  it('applies a condition over the whole file, counts the matches and keeps it while paging', async () => {
    renderDetails();
    fireEvent.click(await screen.findByLabelText('Filter by Amount'));
    const form = screen.getByTestId('condition-form');
    fireEvent.change(within(form).getByLabelText('Condition on Amount'), { target: { value: 'gt' } });
    fireEvent.change(within(form).getByLabelText('Value for Amount'), { target: { value: '2000' } });
    fireEvent.click(within(form).getByText('Apply'));
    await waitFor(() => expect(screen.getByTestId('filter-count').textContent).toContain('109 of 120 rows match'));
    expect(screen.getByTestId('filter-chip').textContent).toContain('Amount > 2000');
    const asked = vi.mocked(previewFile).mock.calls.at(-1)![0] as PreviewFileData;
    expect(JSON.parse(asked.query!.filter!)).toEqual([{ column: 'Amount', op: 'gt', value: 2000 }]);
    fireEvent.click(screen.getByLabelText('Next page'));
    await waitFor(() => expect(screen.getByTestId('row-range').textContent).toContain('Rows 51–100 of 109 matching'));
    const paged = vi.mocked(previewFile).mock.calls.at(-1)![0] as PreviewFileData;
    expect(paged.query!.offset).toBe(50);
    expect(paged.query!.filter).toBe(asked.query!.filter);
    fireEvent.click(screen.getByLabelText('Remove filter Amount > 2000'));
    await waitFor(() => expect(screen.queryByTestId('filter-chips')).toBeNull());
    expect(screen.getByTestId('row-range').textContent).toContain('Rows 1–50 of 120');
  });

  it('offers conditions by type and says them in words', () => {
    expect(opsFor(columns[2]).map((o) => o.op)).toEqual(['contains', 'eq', 'ne', 'empty', 'not_empty']);
    expect(opsFor(columns[1]).map((o) => o.op)).toEqual(['gt', 'ge', 'lt', 'le', 'eq', 'ne', 'empty', 'not_empty']);
    expect(describeCondition({ column: 'Region', op: 'contains', value: 'nor' })).toBe('Region contains “nor”');
    expect(describeCondition({ column: 'Amount', op: 'empty' })).toBe('Amount is empty');
    expect(describeTable({ rows: 600, columns: 4, sheets: ['Orders'] })).toBe('600 rows · 4 columns · 1 sheet');
    expect(describeTable({ rows: 1, columns: 2 })).toBe('1 row · 2 columns');
  });
});
