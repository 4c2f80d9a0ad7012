import { QueryClient, QueryClientProvider } from '@tanstack/react-query';
import { fireEvent, render, screen, waitFor, within } from '@testing-library/react';
import { MemoryRouter } from 'react-router';
import { beforeEach, describe, expect, it, vi } from 'vitest';
import { listVersions, type FileOut } from '@/client';
import { DatasetPanel } from './dataset-panel';
import { fileKeys } from './queries';
import { uploadFile } from './upload';

vi.mock('@/client', async (original) => ({
  ...(await original<typeof import('@/client')>()),
  listVersions: vi.fn(),
}));
vi.mock('./upload', async (original) => ({
  ...(await original<typeof import('./upload')>()),
  uploadFile: vi.fn(),
}));

const sales: FileOut = {
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
const reader = (run_id: string, query: string, session_id: string, session_title: string) => ({
  run_id,
  query,
  session_id,
  session_title,
  asked_at: '2026-03-01T10:00:00Z',
});

function mount() {
  const qc = new QueryClient({ defaultOptions: { queries: { staleTime: Infinity, retry: false } } });
  qc.setQueryData(fileKeys.project('p'), { items: [sales], total: 1 });
  render(
    <QueryClientProvider client={qc}>
      <MemoryRouter>
        <DatasetPanel projectId="p" />
      </MemoryRouter>
    </QueryClientProvider>,
  );
}

const choose = (...files: File[]) => fireEvent.change(screen.getByTestId('file-input'), { target: { files } });

describe('re-uploading a file and its versions', () => {
  beforeEach(() => {
    vi.mocked(uploadFile).mockReset();
    vi.mocked(uploadFile).mockImplementation(async (_p, file) => ({ ...sales, name: file.name, version: 3 }));
  });

  it('asks before a file of the same name becomes its new version, saying the old one stays', async () => {
    mount();
    choose(new File(['a,b\n'], 'sales.csv'), new File(['x\n'], 'other.csv'));
    // A new name goes up at once; the known one waits for the user.
    await waitFor(() => expect(vi.mocked(uploadFile).mock.calls.map((c) => c[1].name)).toEqual(['other.csv']));
    const dialog = screen.getByRole('dialog', { name: 'Replace sales.csv?' });
    expect(dialog.textContent).toContain('This project already has sales.csv (v2). The upload becomes v3');
    expect(dialog.textContent).toContain('v2 stays available');
    fireEvent.click(within(dialog).getByRole('button', { name: 'Cancel' }));
    expect(screen.queryByRole('dialog')).toBeNull();
    expect(uploadFile).toHaveBeenCalledTimes(1);

    choose(new File(['a,b\n'], 'sales.csv'));
    fireEvent.click(within(screen.getByRole('dialog', { name: 'Replace sales.csv?' })).getByRole('button', { name: 'Upload as v3' }));
    await waitFor(() => expect(vi.mocked(uploadFile).mock.calls.map((c) => c[1].name)).toEqual(['other.csv', 'sales.csv']));
    expect(screen.queryByRole('dialog')).toBeNull();
  });

  it('lists each version with its download and the questions that read it, as the server says', async () => {
    vi.mocked(listVersions).mockResolvedValue({
      data: [
        { version: 3, size: 4096, sha256: 'c', created_at: '2026-04-01T10:00:00Z', current: true, read_by: [], read_by_total: 0 },
        {
          version: 2,
          size: 2048,
          sha256: 'b',
          created_at: '2026-03-01T10:00:00Z',
          current: false,
          read_by: [reader('r2', 'Revenue by region?', 's1', 'Revenue')],
          read_by_total: 1,
        },
        {
          version: 1,
          size: 1024,
          sha256: 'a',
          created_at: '2026-01-01T10:00:00Z',
          current: false,
          read_by: [reader('r3', 'Units sold?', 's2', 'Units'), reader('r1', 'Total revenue?', 's1', '')],
          read_by_total: 2,
        },
      ],
    } as never);
    mount();
    fireEvent.click(screen.getByRole('button', { name: 'Versions of sales.csv' }));
    const list = await screen.findByRole('list', { name: 'Versions of sales.csv' });
    const [v3, v2, v1] = within(list).getAllByRole('listitem');
    expect(within(v3).getByTestId('version-uses').textContent).toBe('No question has read this version.');
    expect(within(v2).getByTestId('version-uses').textContent).toBe('Read by “Revenue by region?”');
    expect(within(v1).getByTestId('version-uses').textContent).toBe('Read by “Units sold?” and “Total revenue?”');
    const units = within(v1).getByRole('link', { name: '“Units sold?”' });
    expect(units.getAttribute('href')).toBe('/projects/p/sessions/s2');
    expect(units.getAttribute('title')).toBe('In “Units”');
    expect(within(v1).getByRole('link', { name: '“Total revenue?”' }).getAttribute('title')).toBe('In “Untitled session”');
    expect(within(v1).getByRole('button', { name: 'Download version 1 of sales.csv' })).toBeTruthy();
  });

  it('counts the questions past those the server listed', async () => {
    const readers = Array.from({ length: 20 }, (_, i) => reader(`r${i}`, `Question ${i}?`, 's1', 'Revenue'));
    vi.mocked(listVersions).mockResolvedValue({
      data: [{ version: 2, size: 2048, sha256: 'b', created_at: '2026-03-01T10:00:00Z', current: true, read_by: readers, read_by_total: 25 }],
    } as never);
    mount();
    fireEvent.click(screen.getByRole('button', { name: 'Versions of sales.csv' }));
    const list = await screen.findByRole('list', { name: 'Versions of sales.csv' });
    expect(within(list).getByTestId('version-uses').textContent).toBe('Read by “Question 0?”, “Question 1?”, “Question 2?” and 22 more questions');
  });
});
