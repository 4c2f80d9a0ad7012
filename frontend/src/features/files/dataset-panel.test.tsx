import { QueryClient, QueryClientProvider } from '@tanstack/react-query';
import { fireEvent, render, screen, within } from '@testing-library/react';
import { describe, expect, it, vi } from 'vitest';
import { listVersions, type FileOut } from '@/client';
import { DatasetPanel } from './dataset-panel';
import { fileKeys } from './queries';

vi.mock('@/client', async (original) => ({
  ...(await original<typeof import('@/client')>()),
  listVersions: vi.fn(),
}));

const file: FileOut = {
  id: 'f',
  project_id: 'p',
  name: 'sales.csv',
  size: 2048,
  content_type: 'text/csv',
  sha256: 'b',
  version: 2,
  created_at: '2026-01-01T10:00:00Z',
  updated_at: '2026-03-01T10:00:00Z',
};

describe('DatasetPanel versions', () => {
  it("shows a file's version and lists its versions with dates and sizes", async () => {
    vi.mocked(listVersions).mockResolvedValue({
      data: [
        { version: 2, size: 2048, sha256: 'b', created_at: '2026-03-01T10:00:00Z', current: true },
        { version: 1, size: 1024, sha256: 'a', created_at: '2026-01-01T10:00:00Z', current: false },
      ],
    } as never);
    const qc = new QueryClient({ defaultOptions: { queries: { staleTime: Infinity, retry: false } } });
    qc.setQueryData(fileKeys.project('p'), { items: [file], total: 1 });
    render(
      <QueryClientProvider client={qc}>
        <DatasetPanel projectId="p" />
      </QueryClientProvider>,
    );
    expect(screen.getByTestId('file-version').textContent).toBe('v2');
    // The time shown is the current version's upload.
    expect(screen.getByTestId('file-meta').textContent).toContain(new Date(file.updated_at).toLocaleString(undefined, { dateStyle: 'medium', timeStyle: 'short' }));
    fireEvent.click(screen.getByRole('button', { name: 'Versions of sales.csv' }));
    const list = await screen.findByRole('list', { name: 'Versions of sales.csv' });
    const items = within(list).getAllByRole('listitem');
    expect(items.map((i) => i.getAttribute('data-version'))).toEqual(['2', '1']);
    expect(items[0].textContent).toContain('current');
    expect(items[1].textContent).toContain('1.0 KB');
    expect(within(items[1]).getByRole('button', { name: 'Download version 1 of sales.csv' })).toBeTruthy();
  });

  it('marks each file by what its check found, and opens an unreadable one on its problem', () => {
    const problem = 'random.csv does not look like a text file';
    const qc = new QueryClient({ defaultOptions: { queries: { staleTime: Infinity, retry: false } } });
    qc.setQueryData(fileKeys.project('p'), {
      items: [
        { ...file, id: 'a', name: 'random.csv', version: 1, check: 'unreadable', problem },
        { ...file, id: 'b', name: 'notes.md', version: 1, check: 'not_tabular', problem: null },
        { ...file, id: 'c', name: 'sales.csv', version: 1, check: 'ok', problem: null },
      ],
      total: 3,
    });
    render(
      <QueryClientProvider client={qc}>
        <DatasetPanel projectId="p" />
      </QueryClientProvider>,
    );
    const rows = screen.getAllByTestId('file-row');
    const check = (row: HTMLElement) => within(row).queryByTestId('file-check');
    expect(check(rows[0])?.getAttribute('title')).toBe(problem);
    expect(check(rows[1])?.textContent?.trim()).toBe('No preview');
    expect(check(rows[2])).toBeNull();
    fireEvent.click(within(rows[0]).getByRole('button', { expanded: false }));
    expect(within(rows[0]).getByTestId('file-problem').textContent).toContain(problem);
  });
});

