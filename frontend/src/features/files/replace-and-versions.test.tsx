import { QueryClient, QueryClientProvider } from '@tanstack/react-query';
import { fireEvent, render, screen, waitFor, within } from '@testing-library/react';
import { MemoryRouter } from 'react-router';
import { beforeEach, describe, expect, it, vi } from 'vitest';
import { listVersions, type FileOut } from '@/client';
import { runKeys } from '@/features/runs/queries';
import { sessionKeys } from '@/features/sessions/queries';
import { storedRun } from '@/test/runs';
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
const session = (id: string, title: string) => ({ id, project_id: 'p', title, autonomy: 'auto', tokens_in: 0, tokens_out: 0, cost_usd: null, created_at: '', updated_at: '' });
const read = (id: string, query: string, version: number, code = "pd.read_csv('sales.csv')") =>
  storedRun({ id, query, steps: [{ index: 1, thought: '', code, output: null, error: null, duration_ms: 1, tokens_in: 1, tokens_out: 1 }], files: [{ file_id: 'f', name: 'sales.csv', version, sha256: 'x' }] });

function mount() {
  const qc = new QueryClient({ defaultOptions: { queries: { staleTime: Infinity, retry: false } } });
  qc.setQueryData(fileKeys.project('p'), { items: [sales], total: 1 });
  qc.setQueryData(sessionKeys.project('p'), { items: [session('s1', 'Revenue'), session('s2', 'Units')], total: 2 });
  qc.setQueryData(runKeys.session('s1'), { items: [read('r1', 'Total revenue?', 1), read('r2', 'Revenue by region?', 2)], total: 2 });
  // A run whose workspace had sales.csv but whose code never read it did not use it.
  qc.setQueryData(runKeys.session('s2'), { items: [read('r3', 'Units sold?', 1), read('r4', 'Hello?', 1, 'print(1)')], total: 2 });
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

  it('lists each version with its download and the questions that read it', async () => {
    vi.mocked(listVersions).mockResolvedValue({
      data: [
        { version: 2, size: 2048, sha256: 'b', created_at: '2026-03-01T10:00:00Z', current: true },
        { version: 1, size: 1024, sha256: 'a', created_at: '2026-01-01T10:00:00Z', current: false },
      ],
    } as never);
    mount();
    fireEvent.click(screen.getByRole('button', { name: 'Versions of sales.csv' }));
    const list = await screen.findByRole('list', { name: 'Versions of sales.csv' });
    const [v2, v1] = within(list).getAllByRole('listitem');
    expect(within(v2).getByTestId('version-uses').textContent).toBe('Read by “Revenue by region?”');
    expect(within(v1).getByTestId('version-uses').textContent).toBe('Read by “Total revenue?” and “Units sold?”');
    expect(within(v1).getByRole('link', { name: '“Units sold?”' }).getAttribute('href')).toBe('/projects/p/sessions/s2');
    expect(within(v1).getByRole('button', { name: 'Download version 1 of sales.csv' })).toBeTruthy();
  });
});
