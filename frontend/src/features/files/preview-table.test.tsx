import { QueryClient, QueryClientProvider } from '@tanstack/react-query';
import { fireEvent, render, screen, waitFor, within } from '@testing-library/react';
import { beforeEach, describe, expect, it, vi } from 'vitest';
import { previewFile, type FileOut, type FilePreview, type PreviewColumn, type PreviewFileData } from '@/client';
import { FileDetails } from './file-details';
import { nextSort, previewCell, typeLabel } from './preview-table';

vi.mock('@/client', async (original) => ({
  ...(await original<typeof import('@/client')>()),
  previewFile: vi.fn(),
  profileFile: vi.fn(),
}));

const file: FileOut = {
  id: 'f',
  project_id: 'p',
  name: 'prices.csv',
  size: 4096,
  content_type: 'text/csv',
  sha256: 's',
  version: 1,
  created_at: '2026-01-01T10:00:00Z',
  updated_at: '2026-01-01T10:00:00Z',
  check: 'ok',
  problem: null,
};

// 240 products whose prices are not in order: the largest (119.04) is row 180, past the first page.
const prices = Array.from({ length: 240 }, (_, i) => (i === 180 ? 119.04 : Math.round(((i * 37) % 100) * 1.1 * 100) / 100));

/** A server over the whole table: pages, sorts every row, and reads names from the row asked for. */
function server(options?: PreviewFileData) {
  const q = options?.query ?? {};
  const header = q.header_row ?? 2;
  const order = [...prices.keys()];
  if (q.sort === 'price') order.sort((a, b) => (q.order === 'desc' ? prices[b] - prices[a] : prices[a] - prices[b]) || a - b);
  const offset = q.offset ?? 0;
  const page: FilePreview = {
    columns: [
      { name: header === 2 ? 'id' : 'Report', dtype: 'int64', type: 'number' },
      { name: header === 2 ? 'price' : 'Unnamed: 1', dtype: 'float64', type: 'number', unit: '€' },
    ],
    rows: order.slice(offset, offset + (q.limit ?? 50)).map((i) => [i, prices[i]]),
    row_count: 240 + 2 - header,
    sheets: null,
    sheet: null,
    format: { delimiter: ',', decimal: '.', thousands: null, encoding: 'utf-8' },
    header_row: header,
  };
  return { data: page };
}

function renderDetails() {
  const qc = new QueryClient({ defaultOptions: { queries: { retry: false } } });
  return render(
    <QueryClientProvider client={qc}>
      <FileDetails file={file} />
    </QueryClientProvider>,
  );
}

const firstCells = () => screen.getAllByRole('row').slice(1, 3).map((r) => within(r).getAllByRole('cell')[0].textContent);

beforeEach(() => {
  vi.mocked(previewFile).mockReset();
  vi.mocked(previewFile).mockImplementation((async (options?: PreviewFileData) => server(options)) as never);
});

describe('the preview of a file', () => {
  it('pages through the whole file, page n of N counted from its rows', async () => {
    renderDetails();
    const indicator = await screen.findByTestId('page-indicator');
    expect(indicator.textContent).toBe('Page 1 of 5');
    expect(screen.getByTestId('row-range').textContent).toContain('Rows 1–50 of 240');
    fireEvent.click(screen.getByRole('button', { name: 'Next page' }));
    fireEvent.click(await screen.findByRole('button', { name: 'Next page' }));
    await waitFor(() => expect(screen.getByTestId('page-indicator').textContent).toBe('Page 3 of 5'));
    await waitFor(() => expect(firstCells()).toEqual(['100', '101']));
    expect(screen.getByTestId('row-range').textContent).toContain('Rows 101–150 of 240');
    expect(previewFile).toHaveBeenLastCalledWith({ path: { file_id: 'f' }, query: { offset: 100 } });
    fireEvent.click(screen.getByRole('button', { name: 'Last page' }));
    await waitFor(() => expect(screen.getByTestId('row-range').textContent).toContain('Rows 201–240 of 240'));
    expect(screen.getByRole('button', { name: 'Next page' })).toHaveProperty('disabled', true);
  });

  it('asks the server to sort every row, largest first on the second click', async () => {
    renderDetails();
    await screen.findByTestId('page-indicator');
    fireEvent.click(screen.getByRole('button', { name: 'Next page' }));
    await waitFor(() => expect(screen.getByTestId('page-indicator').textContent).toBe('Page 2 of 5'));
    fireEvent.click(screen.getByRole('button', { name: 'Sort by price' }));
    await waitFor(() => expect(previewFile).toHaveBeenLastCalledWith({ path: { file_id: 'f' }, query: { sort: 'price', order: 'asc' } }));
    fireEvent.click(screen.getByRole('button', { name: 'Sort by price' }));
    await waitFor(() => expect(firstCells()).toEqual(['180', expect.any(String)]));
    expect(previewFile).toHaveBeenLastCalledWith({ path: { file_id: 'f' }, query: { sort: 'price', order: 'desc' } });
    expect(screen.getAllByRole('row')[1].textContent).toContain('€119.04');
    expect(screen.getByTestId('page-indicator').textContent).toBe('Page 1 of 5');
    expect(screen.getByRole('columnheader', { name: /price/ }).getAttribute('aria-sort')).toBe('descending');
    expect(screen.getByTestId('row-range').textContent).toContain('sorted by price, largest first');
  });

  it('says which row the column names came from and lets the user choose another', async () => {
    renderDetails();
    const choice = await screen.findByTestId('header-row');
    const select = within(choice).getByRole('combobox') as HTMLSelectElement;
    expect(select.value).toBe('2');
    expect(select.selectedOptions[0].textContent).toBe('3');
    expect(screen.getByTestId('header-found').textContent).toBe('(found under 2 title rows)');
    fireEvent.change(select, { target: { value: '0' } });
    await screen.findByRole('button', { name: 'Sort by Report' });
    expect(previewFile).toHaveBeenLastCalledWith({ path: { file_id: 'f' }, query: { header_row: 0 } });
    expect(screen.queryByTestId('header-found')).toBeNull();
    expect(screen.getByTestId('row-range').textContent).toContain('of 242');
    fireEvent.click(within(screen.getByTestId('header-row')).getByRole('button', { name: 'detect' }));
    await screen.findByRole('button', { name: 'Sort by price' });
  });
});

describe('cells and types in a person\'s words', () => {
  it('shows amounts with their currency, percents as percents, yes/no in words and dates without a midnight', () => {
    expect(previewCell(1058.58, { name: 'a', dtype: 'float64', type: 'number', unit: '€' })).toBe('€1,058.58');
    expect(previewCell(-5, { name: 'a', dtype: 'float64', type: 'number', unit: '$' })).toBe('-$5');
    expect(previewCell(310.1, { name: 'a', dtype: 'float64', type: 'number', unit: '€' })).toBe('€310.10');
    expect(previewCell(0.125, { name: 'm', dtype: 'float64', type: 'number', unit: '%' })).toBe('12.5%');
    expect(previewCell(0.07, { name: 'm', dtype: 'float64', type: 'number', unit: '%' })).toBe('7%');
    expect(previewCell(true, { name: 'w', dtype: 'bool', type: 'yes/no' })).toBe('yes');
    expect(previewCell(null, { name: 'w', dtype: 'boolean', type: 'yes/no' })).toBe('');
    expect(previewCell('2024-03-01', { name: 'd', dtype: 'datetime64[us]', type: 'date' })).toBe('2024-03-01');
    expect(previewCell('2024-03-01T00:00:00', { name: 'd', dtype: 'datetime64[us]' })).toBe('2024-03-01');
    expect(typeLabel({ name: 'm', dtype: 'float64', type: 'number', unit: '%' })).toBe('number · %');
    expect(typeLabel({ name: 'w', dtype: 'bool' })).toBe('yes/no');
  });

  it('shows a mixed amount column with its currency and usual decimals, and a mix of currencies without one', () => {
    const mixed = { name: 'Amount', dtype: 'float64', type: 'number', mixed: 'number', unit: '€', currency: '€', decimals: 2 } as const;
    expect(previewCell(1371.3, mixed)).toBe('€1,371.30');
    expect(previewCell(2400, mixed)).toBe('€2,400.00');
    expect(previewCell({ unreadable: 'tbd' }, mixed)).toBe('tbd');
    expect(previewCell(12, { name: 'a', dtype: 'float64', type: 'number', currency: 'EUR', decimals: 2 })).toBe('EUR 12.00');
    expect(previewCell(0.125, { name: 'm', dtype: 'float64', type: 'number', unit: '%', decimals: 2 })).toBe('12.50%');
    const two: PreviewColumn = { name: 'a', dtype: 'float64', type: 'number', mixed: 'number', currencies: ['€', '$'], decimals: 2 };
    expect(previewCell(3.1, two)).toBe('3.10');
    expect(typeLabel(two)).toBe('number · € $');
  });

  it('cycles a sort: ascending, descending, the file\'s order', () => {
    expect(nextSort(null, 'price')).toEqual({ column: 'price', order: 'asc' });
    expect(nextSort({ column: 'price', order: 'asc' }, 'price')).toEqual({ column: 'price', order: 'desc' });
    expect(nextSort({ column: 'price', order: 'desc' }, 'price')).toBeNull();
    expect(nextSort({ column: 'price', order: 'desc' }, 'id')).toEqual({ column: 'id', order: 'asc' });
  });
});
