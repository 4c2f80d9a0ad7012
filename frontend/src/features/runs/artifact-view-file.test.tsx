import { QueryClient, QueryClientProvider } from '@tanstack/react-query';
import { fireEvent, render, screen, waitFor, within } from '@testing-library/react';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { previewArtifact } from '@/client';
import { ArtifactView, plainMoment } from './artifact-view';
import { isTabularFile } from './artifact-view-file';
import type { StreamArtifact } from './events';

vi.mock('@/client', async (original) => ({
  ...(await original<typeof import('@/client')>()),
  previewArtifact: vi.fn(),
}));

const XLSX = 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet';
const file = (id: string, name: string, mime: string): StreamArtifact => ({ id, kind: 'file', name, mime, size: 5120, url: `/api/v1/artifacts/${id}/content` });
const book = file('11111111-1111-4111-8111-111111111111', 'report.xlsx', XLSX);
const pdf = file('22222222-2222-4222-8222-222222222222', 'paper.pdf', 'application/pdf');

const sheetOf = (sheet: string) => ({
  columns: [
    { name: sheet === 'Orders' ? 'day' : 'region', dtype: 'object', type: sheet === 'Orders' ? 'date' : 'text' },
    { name: 'amount', dtype: 'float64', type: 'number' },
  ],
  rows: sheet === 'Orders' ? [['2025-07-31', 14856.76]] : [['North', 0.6]],
  row_count: 1,
  sheets: ['Orders', 'Regions'],
  sheet,
  offset: 0,
  limit: 20,
  sort: null,
  order: 'asc',
});

type Asked = { path: { artifact_id: string }; query: { sheet?: string | null } };
beforeEach(() => {
  vi.mocked(previewArtifact).mockReset();
  vi.mocked(previewArtifact).mockImplementation((async (options: Asked) => ({
    data: sheetOf(options.query.sheet ?? 'Orders'),
  })) as unknown as typeof previewArtifact);
});
afterEach(() => vi.clearAllMocks());
const asked = () => vi.mocked(previewArtifact).mock.calls.map(([o]) => o as unknown as Asked);

const shown = (a: StreamArtifact) =>
  render(
    <QueryClientProvider client={new QueryClient({ defaultOptions: { queries: { retry: false } } })}>
      <ArtifactView artifact={a} />
    </QueryClientProvider>,
  );

describe('a file the code wrote', () => {
  it('has one download control, and a file that is not a table shows no preview', () => {
    shown(pdf);
    expect(screen.getAllByRole('button', { name: /download/i })).toHaveLength(1);
    expect(screen.getByRole('button', { name: 'Download paper.pdf' })).toBeTruthy();
    expect(screen.queryByTestId('file-preview')).toBeNull();
    expect(asked()).toEqual([]);
  });

  it("previews a workbook like a dataset, its sheets to switch", async () => {
    shown(book);
    const preview = await screen.findByTestId('file-preview');
    await waitFor(() => expect(within(preview).getByText('2025-07-31')).toBeTruthy());
    expect(within(preview).getByText('14,856.76')).toBeTruthy();
    expect(screen.getAllByRole('button', { name: /download/i })).toHaveLength(1);
    fireEvent.click(within(preview).getByRole('tab', { name: 'Regions' }));
    await waitFor(() => expect(within(preview).getByText('North')).toBeTruthy());
    expect(asked().some((o) => o.path.artifact_id === book.id && o.query.sheet === 'Regions')).toBe(true);
  });

  it('knows the tables by their names', () => {
    expect(isTabularFile(book)).toBe(true);
    expect(isTabularFile(file('x', 'out/data.parquet', ''))).toBe(true);
    expect(isTabularFile(pdf)).toBe(false);
    expect(isTabularFile({ kind: 'table', name: 'sales.json' })).toBe(false);
  });
});

describe('dates of tables saved before they were written as dates', () => {
  it('read as dates, with a time only where there is one', () => {
    expect(plainMoment('2023-04-01T00:00:00.000')).toBe('2023-04-01');
    expect(plainMoment('2023-04-01T00:00:00.000Z')).toBe('2023-04-01');
    expect(plainMoment('2023-04-01T13:05:00.000')).toBe('2023-04-01 13:05');
    expect(plainMoment('2023-04-01T13:05:30.500')).toBe('2023-04-01 13:05:30.5');
    expect(plainMoment('2023-04-01T13:05:30Z')).toBe('2023-04-01 13:05:30 UTC');
    expect(plainMoment('2023-04-01')).toBe('2023-04-01');
    expect(plainMoment('note T00:00')).toBe('note T00:00');
    expect(plainMoment(42)).toBe(42);
  });
});
