import { QueryClient, QueryClientProvider } from '@tanstack/react-query';
import { fireEvent, render, screen, waitFor, within } from '@testing-library/react';
import { beforeEach, describe, expect, it, vi } from 'vitest';
import { checkSource, createSource, deleteSource, getSchema, updateSource, type SourceOut } from '@/client';
import { ApiError } from '@/lib/api';
import { storedSource as source } from '@/test/sources';
import { sourceKeys } from './queries';
import { sourceChanges } from './source-dialog';
import { SourcesPanel } from './sources-panel';

vi.mock('@/client', async (original) => ({
  ...(await original<typeof import('@/client')>()),
  createSource: vi.fn(),
  updateSource: vi.fn(),
  deleteSource: vi.fn(),
  checkSource: vi.fn(),
  getSchema: vi.fn(),
  listSources: vi.fn(async () => ({ data: { items: [], total: 0 } })),
}));
const { toast } = vi.hoisted(() => ({ toast: { success: vi.fn(), error: vi.fn() } }));
vi.mock('sonner', () => ({ toast }));

function show(sources: SourceOut[]) {
  const qc = new QueryClient({ defaultOptions: { queries: { staleTime: Infinity, retry: false } } });
  qc.setQueryData(sourceKeys.project('p'), { items: sources, total: sources.length });
  render(
    <QueryClientProvider client={qc}>
      <SourcesPanel projectId="p" />
    </QueryClientProvider>,
  );
  return qc;
}

const row = (name: string) => screen.getAllByTestId('source-row').find((r) => r.dataset.source === name)!;

beforeEach(() => {
  vi.mocked(createSource).mockReset();
  vi.mocked(updateSource).mockReset();
  vi.mocked(checkSource).mockReset();
  toast.success.mockReset();
  toast.error.mockReset();
});

describe('SourcesPanel', () => {
  it('lists each source with its kind, masked URL, status sentence, access in words, tables and check time', () => {
    show([
      source(),
      source({
        id: 's2',
        name: 'crm',
        kind: 'mysql',
        display_url: 'mysql://app@crm.internal:3306/crm',
        status: 'failed',
        status_detail: 'The server refused the connection: is it running on crm.internal:3306?',
        access: null,
        table_count: null,
        checked_at: null,
      }),
    ]);
    const wh = within(row('warehouse'));
    expect(wh.getByTestId('source-kind').textContent).toBe('PostgreSQL');
    expect(wh.getByTestId('source-url').textContent).toBe('postgresql://ana:***@db.internal:5432/sales');
    expect(wh.getByTestId('source-status').textContent).toContain('Ready');
    expect(wh.getByTestId('source-status-detail').textContent).toContain('Connected to PostgreSQL 17.2');
    expect(wh.getByTestId('source-facts').textContent).toMatch(
      /^read-only by construction: the role can write, every query runs in a read-only transaction · 12 tables · checked /,
    );
    const crm = within(row('crm'));
    expect(crm.getByTestId('source-kind').textContent).toBe('MySQL / MariaDB');
    expect(crm.getByTestId('source-status').textContent).toContain('Failed');
    expect(crm.getByTestId('source-status-detail').className).toContain('text-destructive');
    expect(crm.getByTestId('source-facts').textContent).toBe('never checked');
  });

  it('adds a source from fields, the password sent apart and never in the URL; says the check went wrong, and shows its status', async () => {
    const added = source({ id: 's3', name: 'shop', status: 'failed', status_detail: 'Wrong password for ana.', access: null });
    vi.mocked(createSource).mockResolvedValue({ data: added } as never);
    show([]);
    fireEvent.click(screen.getByRole('button', { name: 'Add source' }));
    const dialog = screen.getByRole('dialog');
    fireEvent.change(within(dialog).getByLabelText('Name'), { target: { value: 'shop' } });
    fireEvent.click(within(dialog).getByRole('tab', { name: 'Fields' }));
    fireEvent.change(within(dialog).getByLabelText('Host'), { target: { value: 'db.internal' } });
    fireEvent.change(within(dialog).getByLabelText('Database'), { target: { value: 'sales' } });
    fireEvent.change(within(dialog).getByLabelText('User'), { target: { value: 'ana' } });
    fireEvent.change(within(dialog).getByLabelText('Password'), { target: { value: 'pa:ss@word' } });
    fireEvent.click(within(dialog).getByRole('button', { name: 'Add and check' }));
    await waitFor(() => expect(createSource).toHaveBeenCalled());
    expect(vi.mocked(createSource).mock.calls[0][0]).toMatchObject({
      path: { project_id: 'p' },
      body: { name: 'shop', url: 'postgresql://ana@db.internal:5432/sales', password: 'pa:ss@word', description: '' },
    });
    await waitFor(() => expect(screen.queryByRole('dialog')).toBeNull());
    expect(toast.error).toHaveBeenCalledWith('shop was added, but could not be used.', { description: 'Wrong password for ana.' });
  });

  it('moves a password typed in the URL into its own field, and shows the server\'s sentence when adding fails', async () => {
    vi.mocked(createSource).mockRejectedValue(new ApiError(409, "This project already has a source named 'shop'; choose another name.", 'source_name_taken'));
    show([]);
    fireEvent.click(screen.getByRole('button', { name: 'Add source' }));
    const dialog = screen.getByRole('dialog');
    fireEvent.change(within(dialog).getByLabelText('Name'), { target: { value: 'shop' } });
    const url = within(dialog).getByLabelText('URL') as HTMLInputElement;
    fireEvent.change(url, { target: { value: 'postgresql://ana:hunter2@db:5432/sales' } });
    fireEvent.blur(url);
    expect(url.value).toBe('postgresql://ana@db:5432/sales');
    expect((within(dialog).getByLabelText('Password') as HTMLInputElement).value).toBe('hunter2');
    expect(dialog.textContent).toContain('The password was taken out of the URL');
    fireEvent.click(within(dialog).getByRole('button', { name: 'Add and check' }));
    await within(dialog).findByText("This project already has a source named 'shop'; choose another name.");
    expect(vi.mocked(createSource).mock.calls[0][0].body).toMatchObject({ url: 'postgresql://ana@db:5432/sales', password: 'hunter2' });
  });

  it('says what is wrong with a name before sending it', () => {
    show([]);
    fireEvent.click(screen.getByRole('button', { name: 'Add source' }));
    const dialog = screen.getByRole('dialog');
    fireEvent.change(within(dialog).getByLabelText('Name'), { target: { value: 'my shop' } });
    fireEvent.change(within(dialog).getByLabelText('URL'), { target: { value: 'sqlite:////srv/shop.db' } });
    expect(within(dialog).queryByLabelText('Password')).toBeNull(); // a file on the server has none
    fireEvent.click(within(dialog).getByRole('button', { name: 'Add and check' }));
    expect(within(dialog).getByRole('alert').textContent).toMatch(/starts with a letter/);
    expect(createSource).not.toHaveBeenCalled();
  });

  it('checks again with a spinner, then says the sentence', async () => {
    let answer: (v: unknown) => void = () => undefined;
    vi.mocked(checkSource).mockReturnValue(new Promise((r) => (answer = r)) as never);
    show([source()]);
    fireEvent.click(screen.getByRole('button', { name: 'Check warehouse again' }));
    await within(row('warehouse')).findByText('Checking…');
    answer({ data: { ok: false, detail: 'The server did not answer within 10 s.', status: 'failed', access: null, server_version: null, table_count: null } });
    await waitFor(() => expect(toast.error).toHaveBeenCalledWith('warehouse could not be used.', { description: 'The server did not answer within 10 s.' }));
  });

  it('edits the URL without its masked password, keeping the stored one unless a new one is typed', async () => {
    vi.mocked(updateSource).mockResolvedValue({ data: source({ name: 'dw' }) } as never);
    show([source()]);
    fireEvent.click(screen.getByRole('button', { name: 'Edit warehouse' }));
    const dialog = screen.getByRole('dialog');
    expect((within(dialog).getByLabelText('URL') as HTMLInputElement).value).toBe('postgresql://ana@db.internal:5432/sales');
    expect((within(dialog).getByLabelText('Password') as HTMLInputElement).value).toBe('');
    fireEvent.change(within(dialog).getByLabelText('Name'), { target: { value: 'dw' } });
    fireEvent.click(within(dialog).getByRole('button', { name: 'Save' }));
    await waitFor(() => expect(updateSource).toHaveBeenCalled());
    expect(vi.mocked(updateSource).mock.calls[0][0]).toEqual({ path: { source_id: 's1' }, body: { name: 'dw' } });
    expect(toast.success).not.toHaveBeenCalled(); // not checked again: nothing about connecting changed
  });

  it('sends only what changed', () => {
    const s = source();
    const same = { name: 'warehouse', description: '', url: 'postgresql://ana@db.internal:5432/sales', password: '' };
    expect(sourceChanges(s, same)).toEqual({});
    expect(sourceChanges(s, { ...same, password: 'new' })).toEqual({ password: 'new' });
    expect(sourceChanges(s, { ...same, url: 'postgresql://bob:pw@db.internal:5432/sales' })).toEqual({ url: 'postgresql://bob@db.internal:5432/sales', password: 'pw' });
    expect(sourceChanges(s, { ...same, description: ' Sales facts ' })).toEqual({ description: 'Sales facts' });
  });

  it('deletes after a confirmation naming the source', async () => {
    vi.mocked(deleteSource).mockResolvedValue({ data: undefined } as never);
    show([source()]);
    fireEvent.click(screen.getByRole('button', { name: 'Delete warehouse' }));
    const dialog = screen.getByRole('dialog');
    expect(dialog.textContent).toContain('“warehouse” will be removed from this project');
    fireEvent.click(within(dialog).getByRole('button', { name: 'Delete' }));
    await waitFor(() => expect(deleteSource).toHaveBeenCalledWith({ path: { source_id: 's1' } }));
  });

  it('opens a source on its tables', async () => {
    vi.mocked(getSchema).mockResolvedValue({
      data: { tables: [{ schema: 'public', name: 'orders', description: '', row_estimate: 1204, columns: [] }], truncated: false, checked_at: null },
    } as never);
    show([source()]);
    fireEvent.click(screen.getByRole('button', { name: 'Show the tables of warehouse' }));
    expect((await screen.findByTestId('schema-table')).dataset.table).toBe('public.orders');
  });
});
