import { QueryClient, QueryClientProvider } from '@tanstack/react-query';
import { fireEvent, render, screen, within } from '@testing-library/react';
import { beforeEach, describe, expect, it, vi } from 'vitest';
import { previewFile, profileFile, type FileOut, type FilePreview, type FileProfile } from '@/client';
import { describeFormat, FileCheckBadge, FileDetails, ProfileTable } from './file-details';

vi.mock('@/client', async (original) => ({
  ...(await original<typeof import('@/client')>()),
  previewFile: vi.fn(),
  profileFile: vi.fn(),
}));

const base: FileOut = {
  id: 'f',
  project_id: 'p',
  name: 'book.xlsx',
  size: 2048,
  content_type: 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet',
  sha256: 'b',
  version: 1,
  created_at: '2026-01-01T10:00:00Z',
  updated_at: '2026-01-01T10:00:00Z',
  check: 'ok',
  problem: null,
};

const sheetPreview = (sheet: string, rows: unknown[][]): FilePreview => ({
  columns: [{ name: 'item', dtype: 'str' }],
  rows,
  row_count: rows.length,
  sheets: ['Sales', 'Costs'],
  sheet,
  format: null,
});

function renderWith(node: React.ReactNode) {
  const qc = new QueryClient({ defaultOptions: { queries: { retry: false } } });
  return render(<QueryClientProvider client={qc}>{node}</QueryClientProvider>);
}

beforeEach(() => vi.mocked(previewFile).mockReset());

describe('FileCheckBadge', () => {
  it('marks an unreadable file with its sentence, says a non-table has no preview, and is silent for a good file', () => {
    const problem = 'random.csv does not look like a text file';
    const { rerender, container } = render(<FileCheckBadge file={{ ...base, name: 'random.csv', check: 'unreadable', problem }} />);
    const badge = screen.getByTestId('file-check');
    expect(badge.getAttribute('data-check')).toBe('unreadable');
    expect(badge.getAttribute('title')).toBe(problem);
    expect(badge.textContent?.trim()).toBe(`Unreadable: ${problem}`);
    rerender(<FileCheckBadge file={{ ...base, name: 'empty.csv', check: 'empty', problem: 'empty.csv is empty.' }} />);
    expect(screen.getByTestId('file-check').textContent).toContain('Empty');
    rerender(<FileCheckBadge file={{ ...base, name: 'notes.md', check: 'not_tabular' }} />);
    expect(screen.getByTestId('file-check').textContent?.trim()).toBe('No preview');
    rerender(<FileCheckBadge file={base} />);
    expect(container.textContent).toBe('');
  });
});

describe('FileDetails', () => {
  it("switches a workbook's sheets with tabs", async () => {
    vi.mocked(previewFile).mockImplementation((async (options?: { query?: { sheet?: string } }) => ({
      data: options?.query?.sheet === 'Costs' ? sheetPreview('Costs', [['ink']]) : sheetPreview('Sales', [['pen']]),
    })) as never);
    renderWith(<FileDetails file={base} />);
    const tabs = await screen.findByRole('tablist', { name: 'Sheets of book.xlsx' });
    expect(within(tabs).getAllByRole('tab').map((t) => t.textContent)).toEqual(['Sales', 'Costs']);
    expect(within(tabs).getByRole('tab', { name: 'Sales' }).getAttribute('aria-selected')).toBe('true');
    expect(await screen.findByText('pen')).toBeTruthy();
    fireEvent.click(within(tabs).getByRole('tab', { name: 'Costs' }));
    expect(await screen.findByText('ink')).toBeTruthy();
    expect(screen.queryByText('pen')).toBeNull();
    expect(within(tabs).getByRole('tab', { name: 'Costs' }).getAttribute('aria-selected')).toBe('true');
    expect(vi.mocked(previewFile)).toHaveBeenCalledWith({ path: { file_id: 'f' }, query: { sheet: 'Costs' } });
  });

  it('shows no sheet tabs for one sheet, how a CSV was read, and dates without a midnight', async () => {
    vi.mocked(previewFile).mockResolvedValue({
      data: {
        columns: [
          { name: 'day', dtype: 'datetime64[us]', date_format: '%d/%m/%Y' },
          { name: 'amount', dtype: 'float64' },
        ],
        rows: [['2026-01-31T00:00:00', 1234.56]],
        row_count: 1,
        sheets: null,
        sheet: null,
        format: { delimiter: ';', decimal: ',', thousands: '.', encoding: 'utf-8' },
      },
    } as never);
    renderWith(<FileDetails file={{ ...base, name: 'ventes.csv' }} />);
    expect(await screen.findByText('2026-01-31')).toBeTruthy();
    expect(screen.getByText('1,234.56')).toBeTruthy();
    expect(screen.queryByRole('tablist', { name: /Sheets/ })).toBeNull();
    expect(screen.getByTestId('file-format').textContent).toBe('Separated by “;” · decimal comma, “.” between thousands · UTF-8');
  });

  it('shows the profile of the columns in the Columns tab', async () => {
    vi.mocked(previewFile).mockResolvedValue({ data: sheetPreview('Sales', [['pen']]) } as never);
    vi.mocked(profileFile).mockResolvedValue({
      data: {
        sheet: 'Sales',
        row_count: 4,
        rows_profiled: 4,
        complete: true,
        columns: [{ name: 'item', dtype: 'str', kind: 'text', missing: 1, distinct: 2, min: null, max: null, mean: null, top: [{ value: 'pen', count: 2 }] }],
      },
    } as never);
    renderWith(<FileDetails file={base} />);
    expect(profileFile).not.toHaveBeenCalled();
    fireEvent.click(await screen.findByRole('tab', { name: 'Columns' }));
    expect((await screen.findByTestId('profile-coverage')).textContent).toBe('All 4 rows profiled.');
    expect(screen.getByTestId('profile-missing').textContent).toBe('1 (25%)');
    expect(screen.getByTestId('profile-values').textContent).toBe('pen ×2');
  });

  it('shows the problem of an unreadable file and does not ask for its preview', () => {
    const problem = 'fake.xlsx could not be read as Excel: the file is damaged or is not an Excel workbook';
    renderWith(<FileDetails file={{ ...base, name: 'fake.xlsx', check: 'unreadable', problem }} />);
    expect(screen.getByTestId('file-problem').textContent).toBe(`${problem} It can still be downloaded and used in questions.`);
    expect(previewFile).not.toHaveBeenCalled();
  });

  it('says a file that is not a table has no preview', () => {
    renderWith(<FileDetails file={{ ...base, name: 'notes.md', check: 'not_tabular' }} />);
    expect(screen.getByTestId('no-preview').textContent).toContain('No preview: notes.md is not a table');
    expect(previewFile).not.toHaveBeenCalled();
  });
});

describe('ProfileTable', () => {
  const profile: FileProfile = {
    sheet: null,
    row_count: 250000,
    rows_profiled: 100000,
    complete: false,
    columns: [
      { name: 'amount', dtype: 'float64', kind: 'number', missing: 0, distinct: 3, min: -3, max: 1234.56, mean: 414.52, top: null },
      { name: 'day', dtype: 'datetime64[us]', kind: 'datetime', missing: 2, distinct: 2, min: '2026-01-31T00:00:00', max: '2026-02-01T10:30:00', mean: '2026-01-31T12:00:00.5', top: null },
      { name: 'empty', dtype: 'float64', kind: 'number', missing: 100000, distinct: 0, min: null, max: null, mean: null, top: null },
    ],
  };

  it('says how much of the file it covers, and each range', () => {
    render(<ProfileTable profile={profile} />);
    expect(screen.getByTestId('profile-coverage').textContent).toBe('Profiled the first 100,000 of 250,000 rows.');
    const values = screen.getAllByTestId('profile-values').map((v) => v.textContent);
    expect(values).toEqual(['min -3 · mean 414.52 · max 1,234.56', 'min 2026-01-31 · mean 2026-01-31T12:00:00 · max 2026-02-01T10:30:00', 'no values']);
    expect(screen.getAllByTestId('profile-missing').map((m) => m.textContent)).toEqual(['0', '2 (0%)', '100,000 (100%)']);
  });

  it('shows amounts with their currency and at the column decimals', () => {
    const amounts: FileProfile = {
      sheet: null,
      row_count: 3,
      rows_profiled: 3,
      complete: true,
      columns: [
        { name: 'price', dtype: 'float64', kind: 'number', missing: 0, distinct: 3, min: 0, max: 3298.9, mean: 1204.5, top: null, unit: '$', currency: '$', decimals: 2 },
        { name: 'paid', dtype: 'float64', kind: 'number', missing: 0, distinct: 3, min: -3, max: 12, mean: 4.333, top: null, currencies: ['€', '$'], decimals: 2 },
      ],
    };
    render(<ProfileTable profile={amounts} />);
    const values = screen.getAllByTestId('profile-values').map((v) => v.textContent);
    expect(values).toEqual(['min $0.00 · mean $1,204.50 · max $3,298.90', 'min -3.00 · mean 4.33 · max 12.00']);
  });
});

describe('describeFormat', () => {
  it('names the separator, a decimal comma and the encoding', () => {
    expect(describeFormat({ delimiter: ',', decimal: '.', thousands: null, encoding: 'utf-8' })).toBe('Separated by comma · UTF-8');
    expect(describeFormat({ delimiter: '\t', decimal: ',', thousands: null, encoding: 'cp1252' })).toBe('Separated by tab · decimal comma · cp1252');
  });
});
