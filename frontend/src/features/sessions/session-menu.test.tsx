import { QueryClient, QueryClientProvider } from '@tanstack/react-query';
import { fireEvent, render, screen, waitFor, within } from '@testing-library/react';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { toast } from 'sonner';
import { listRuns, listShares, type SessionOut } from '@/client';
import { useAuthStore } from '@/features/auth/auth-store';
import { ProjectRoleProvider } from '@/features/projects/role';
import { fallbackExportName } from './export';
import { SessionMenu } from './session-menu';

vi.mock('sonner', () => ({ toast: { error: vi.fn() } }));
vi.mock('@/client', async (original) => ({ ...(await original<typeof import('@/client')>()), listRuns: vi.fn(), listShares: vi.fn() }));

/** The session's history as the export dialog lists it. */
const history = (runs: { id: string; query: string; status: string }[]) =>
  vi.mocked(listRuns).mockResolvedValue({ data: { items: runs, total: runs.length } } as never);

const session: SessionOut = {
  id: 's1',
  project_id: 'p1',
  title: 'Revenue by region',
  autonomy: 'auto',
  recorded: false,
  parent_session_id: null,
  branched_after_run_id: null,
  restored: null,
  file_pins: [],
  tokens_in: 0,
  tokens_out: 0,
  cost_usd: null,
  created_at: '',
  updated_at: '',
};

const fetchMock = vi.fn<typeof fetch>();
let saved: { name: string; href: string }[] = [];

function renderMenu() {
  render(
    <QueryClientProvider client={new QueryClient()}>
      <SessionMenu session={session} />
    </QueryClientProvider>,
  );
}

function openMenu() {
  // Radix opens its menu on the trigger's keyboard (and pointer) events, not on click.
  fireEvent.keyDown(screen.getByRole('button', { name: 'Session actions' }), { key: 'Enter' });
  return screen.getByRole('menu');
}

beforeEach(() => {
  vi.stubGlobal('fetch', fetchMock);
  vi.stubGlobal(
    'ResizeObserver',
    class {
      observe() {}
      unobserve() {}
      disconnect() {}
    },
  );
  URL.createObjectURL = vi.fn(() => 'blob:export');
  URL.revokeObjectURL = vi.fn();
  saved = [];
  vi.spyOn(HTMLAnchorElement.prototype, 'click').mockImplementation(function (this: HTMLAnchorElement) {
    saved.push({ name: this.download, href: this.getAttribute('href') ?? '' });
  });
  useAuthStore.setState({ auth: { token: 'tok', user: {} as never, expiresAt: '2999-01-01T00:00:00Z' } });
});

afterEach(() => {
  fetchMock.mockReset();
  vi.restoreAllMocks();
  vi.unstubAllGlobals();
});

describe('SessionMenu', () => {
  it('offers the notebook, the report and Markdown', () => {
    renderMenu();
    openMenu();
    expect(screen.getAllByRole('menuitem').map((i) => i.textContent)).toEqual([
      'Export as notebook (.ipynb)',
      'Export as report (.html)',
      'Export as Markdown (.md)',
      'Choose questions to export…',
      'Share…',
    ]);
  });

  it('opens the share dialog for an editor; a viewer reads why not', async () => {
    history([]);
    vi.mocked(listShares).mockResolvedValue({ data: { items: [], total: 0 } } as never);
    const { unmount } = render(
      <QueryClientProvider client={new QueryClient()}>
        <ProjectRoleProvider value="editor">
          <SessionMenu session={session} />
        </ProjectRoleProvider>
      </QueryClientProvider>,
    );
    fireEvent.click(within(openMenu()).getByRole('menuitem', { name: 'Share…' }));
    await screen.findByRole('dialog', { name: 'Share a read-only report' });
    unmount();

    render(
      <QueryClientProvider client={new QueryClient()}>
        <ProjectRoleProvider value="viewer">
          <SessionMenu session={session} />
        </ProjectRoleProvider>
      </QueryClientProvider>,
    );
    const share = within(openMenu()).getByRole('menuitem', { name: 'Share…' });
    expect(share.getAttribute('aria-disabled')).toBe('true');
    expect(share.title).toBe("Viewers can't share sessions; ask an owner to make you an editor.");
    expect(screen.getByTestId('share-blocked').textContent).toBe(share.title);
  });

  it('lets the user choose the format and the questions, the answered ones to start with', async () => {
    const run = (id: string, query: string, status: string) => ({ id, query, status });
    const runs = [run('r1', 'Which region leads?', 'succeeded'), run('r2', 'What is the margin?', 'failed'), run('r3', 'Chart it.', 'succeeded'), run('r4', 'Slow one', 'cancelled')];
    history(runs);
    fetchMock.mockImplementation(async () => {
      return new Response('<html></html>', { headers: { 'Content-Type': 'text/html', 'Content-Disposition': 'attachment; filename="Revenue by region.html"' } });
    });
    renderMenu();
    openMenu();
    fireEvent.click(screen.getByRole('menuitem', { name: 'Choose questions to export…' }));
    const dialog = await screen.findByRole('dialog', { name: 'Export questions' });
    await within(dialog).findByText('Which region leads?');
    const boxes = () => within(dialog).getAllByRole('checkbox') as HTMLInputElement[];
    expect(boxes().map((b) => b.checked)).toEqual([true, false, true, false]);
    expect(within(dialog).getByText('Failed')).toBeTruthy();
    expect(within(dialog).getByText('Stopped')).toBeTruthy();
    expect(within(dialog).getByRole('radio', { name: /Report/ }).getAttribute('aria-checked')).toBe('true');

    fireEvent.click(boxes()[2]); // leave out "Chart it."
    fireEvent.click(boxes()[3]); // take the stopped one in
    // The arrow keys move between formats (the group is one tab stop, on the format chosen).
    const report = within(dialog).getByRole('radio', { name: /Report/ });
    expect(report.tabIndex).toBe(0);
    fireEvent.keyDown(report, { key: 'ArrowRight' });
    expect(within(dialog).getByRole('radio', { name: /Markdown/ }).getAttribute('aria-checked')).toBe('true');
    expect(within(dialog).getByText('2 of 4 questions')).toBeTruthy();
    fireEvent.click(within(dialog).getByRole('button', { name: 'Export .md' }));
    await waitFor(() => expect(saved).toHaveLength(1));
    expect(fetchMock.mock.calls[0][0]).toBe('/api/v1/sessions/s1/export?format=md&runs=r1%2Cr4');
    await waitFor(() => expect(screen.queryByRole('dialog')).toBeNull());
  });

  it('chooses every question with "All" and none leaves nothing to export', async () => {
    const runs = [{ id: 'r1', query: 'Q1', status: 'failed' }, { id: 'r2', query: 'Q2', status: 'succeeded' }];
    history(runs);
    renderMenu();
    openMenu();
    fireEvent.click(screen.getByRole('menuitem', { name: 'Choose questions to export…' }));
    const dialog = await screen.findByRole('dialog', { name: 'Export questions' });
    await within(dialog).findByText('Q1');
    const boxes = () => within(dialog).getAllByRole('checkbox') as HTMLInputElement[];
    fireEvent.click(within(dialog).getByRole('button', { name: 'All' }));
    expect(boxes().map((b) => b.checked)).toEqual([true, true]);
    boxes().forEach((b) => fireEvent.click(b));
    expect((within(dialog).getByRole('button', { name: 'Export .html' }) as HTMLButtonElement).disabled).toBe(true);
  });

  it('shows the progress, then saves the file under the name the server gives', async () => {
    let respond!: (r: Response) => void;
    fetchMock.mockReturnValue(new Promise((r) => (respond = r)));
    renderMenu();
    openMenu();
    fireEvent.click(screen.getByRole('menuitem', { name: 'Export as notebook (.ipynb)' }));

    const busy = await screen.findByRole('menuitem', { name: 'Exporting…' });
    expect(busy.getAttribute('aria-busy')).toBe('true');
    expect(screen.getAllByRole('menuitem').every((i) => i.getAttribute('aria-disabled') === 'true')).toBe(true);
    const [url, init] = fetchMock.mock.calls[0];
    expect(url).toBe('/api/v1/sessions/s1/export?format=ipynb');
    expect(new Headers(init?.headers).get('Authorization')).toBe('Bearer tok');

    respond(
      new Response('{"nbformat": 4}', {
        headers: {
          'Content-Type': 'application/x-ipynb+json',
          'Content-Disposition': `attachment; filename="Revenue by region.ipynb"; filename*=UTF-8''Revenue%20by%20r%C3%A9gion.ipynb`,
        },
      }),
    );
    await waitFor(() => expect(saved).toEqual([{ name: 'Revenue by région.ipynb', href: 'blob:export' }]));
    await waitFor(() => expect(screen.queryByRole('menu')).toBeNull());
  });

  it("shows the server's sentence when the export fails, and lets the user try again", async () => {
    const detail = 'Object storage is not reachable; try again in a minute.';
    fetchMock.mockResolvedValue(
      new Response(JSON.stringify({ detail, code: 'storage_unavailable' }), {
        status: 503,
        headers: { 'Content-Type': 'application/json', 'Retry-After': '30' },
      }),
    );
    renderMenu();
    openMenu();
    fireEvent.click(screen.getByRole('menuitem', { name: 'Export as report (.html)' }));

    const alert = await screen.findByRole('alert');
    expect(alert.textContent).toBe(`Export failed: ${detail}`);
    expect(screen.getByRole('menu')).toBeTruthy();
    expect(saved).toEqual([]);
    const again = screen.getByRole('menuitem', { name: 'Export as report (.html)' });
    expect(again.getAttribute('aria-disabled')).toBeNull();

    fetchMock.mockResolvedValue(new Response('<html></html>', { headers: { 'Content-Type': 'text/html' } }));
    fireEvent.click(again);
    await waitFor(() => expect(saved).toEqual([{ name: 'Revenue by region.html', href: 'blob:export' }]));
  });

  it('reports a failure in a toast when the menu was closed meanwhile', async () => {
    let respond!: (r: Response) => void;
    fetchMock.mockReturnValue(new Promise((r) => (respond = r)));
    renderMenu();
    openMenu();
    fireEvent.click(screen.getByRole('menuitem', { name: 'Export as Markdown (.md)' }));
    await screen.findByRole('menuitem', { name: 'Exporting…' });
    fireEvent.keyDown(screen.getByRole('menu'), { key: 'Escape' });
    await waitFor(() => expect(screen.queryByRole('menu')).toBeNull());

    respond(new Response(JSON.stringify({ detail: 'Session not found.', code: 'not_found' }), { status: 404 }));
    await waitFor(() => expect(toast.error).toHaveBeenCalledWith('Export failed: Session not found.'));
    expect(saved).toEqual([]);
  });
});

describe('fallbackExportName', () => {
  it('names the file after the session, safely', () => {
    expect(fallbackExportName('Q1: sales/returns?', 'md')).toBe('Q1 sales returns.md');
    expect(fallbackExportName('', 'ipynb')).toBe('session.ipynb');
    expect(fallbackExportName(null, 'html')).toBe('session.html');
  });
});
