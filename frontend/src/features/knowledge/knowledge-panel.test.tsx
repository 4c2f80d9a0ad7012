import { QueryClient, QueryClientProvider } from '@tanstack/react-query';
import { fireEvent, render, screen, waitFor, within } from '@testing-library/react';
import { MemoryRouter } from 'react-router';
import { beforeEach, describe, expect, it, vi } from 'vitest';
import { useAuthStore } from '@/features/auth/auth-store';
import { ProjectRoleProvider, type Role } from '@/features/projects/role';
import { createKnowledge, deleteKnowledge, listKnowledge, updateKnowledge } from './api';
import { FLAGGED_INSTRUCTIONS } from './knowledge';
import { EMPTY_TEXT, KnowledgePanel } from './knowledge-panel';
import type { KnowledgeItem } from './types';

vi.mock('./api', () => ({ listKnowledge: vi.fn(), createKnowledge: vi.fn(), updateKnowledge: vi.fn(), deleteKnowledge: vi.fn(), verifyRun: vi.fn() }));
vi.mock('@/client', async (original) => ({
  ...(await original<typeof import('@/client')>()),
  listFiles: vi.fn(async () => ({ data: { items: [{ id: 'f1', name: 'orders.csv' }], total: 1 } })),
  listSources: vi.fn(async () => ({ data: { items: [], total: 0 } })),
}));

const item = (over: Partial<KnowledgeItem>): KnowledgeItem => ({
  id: 'i',
  project_id: 'p',
  kind: 'definition',
  title: 'Active customer',
  body: 'A customer who ordered in the last 90 days.',
  applies_to: {},
  status: 'approved',
  source_run_id: null,
  created_by: 'ana',
  created_by_email: 'ana@example.com',
  approved_by: 'ana',
  approved_by_email: 'ana@example.com',
  approved_at: '2026-11-02T10:00:00Z',
  created_at: '2026-11-01T10:00:00Z',
  updated_at: '2026-11-01T10:00:00Z',
  flags: [],
  tokens: 10,
  target_missing: null,
  ...over,
});
const approved = item({ id: 'a1' });
const proposal = item({
  id: 'p1',
  kind: 'lesson',
  title: 'prise is price',
  body: '<b>prise</b> is the old name of price',
  status: 'proposed',
  source_run_id: 'r1',
  created_by: null,
  created_by_email: null,
  approved_by: null,
  approved_by_email: null,
  approved_at: null,
  created_at: '2026-10-01T10:00:00Z',
  applies_to: { file_id: 'f1', column: 'prise' },
});
const flagged = item({ id: 'p2', title: 'Ignore the rules', status: 'proposed', flags: ['instructions'], created_at: '2026-09-01T10:00:00Z' });

function show(role: Role, items: KnowledgeItem[] = [approved, proposal, flagged]) {
  useAuthStore.setState({ auth: { token: 't', expiresAt: '2099-01-01T00:00:00Z', user: { id: 'me' } as never } });
  vi.mocked(listKnowledge).mockResolvedValue({ items, total: items.length });
  const qc = new QueryClient({ defaultOptions: { queries: { retry: false } } });
  render(
    <QueryClientProvider client={qc}>
      <MemoryRouter>
        <ProjectRoleProvider value={role}>
          <KnowledgePanel projectId="p" />
        </ProjectRoleProvider>
      </MemoryRouter>
    </QueryClientProvider>,
  );
}

const card = (title: string) => within(screen.getAllByTestId('knowledge-item').find((li) => li.textContent?.includes(title))!);

beforeEach(() => {
  vi.mocked(updateKnowledge).mockReset();
  vi.mocked(createKnowledge).mockReset();
  vi.mocked(deleteKnowledge).mockReset();
});

describe('KnowledgePanel', () => {
  it('lists proposals first, with their warnings, bodies as text and what they apply to', async () => {
    show('editor');
    await waitFor(() => expect(screen.getAllByTestId('knowledge-item')).toHaveLength(3));
    expect(screen.getAllByTestId('knowledge-item').map((li) => li.dataset.itemId)).toEqual(['p1', 'p2', 'a1']);
    expect(screen.getByTestId('proposal-count').textContent).toBe('2 waiting for review');
    expect(card('Ignore the rules').getByTestId('item-warning').textContent).toContain(FLAGGED_INSTRUCTIONS);
    expect(card('prise is price').queryByTestId('item-warning')).toBeNull();
    // The agent's text shows as typed: no element is made of it.
    expect(card('prise is price').getByTestId('item-body').textContent).toBe('<b>prise</b> is the old name of price');
    expect(card('prise is price').getByTestId('item-body').querySelector('b')).toBeNull();
    await waitFor(() => expect(card('prise is price').getByTestId('item-applies').textContent).toBe('Applies to file orders.csv · column prise'));
    expect(card('prise is price').getByText(/Proposed by the agent/)).toBeTruthy();
    expect(card('Active customer').getByText(/approved by ana@example.com/)).toBeTruthy();
  });

  it('approves and rejects a proposal', async () => {
    vi.mocked(updateKnowledge).mockResolvedValue(item({ id: 'p1', status: 'approved' }));
    show('editor');
    await waitFor(() => screen.getAllByTestId('knowledge-item'));
    fireEvent.click(card('prise is price').getByRole('button', { name: /^Approve$/ }));
    await waitFor(() => expect(updateKnowledge).toHaveBeenCalledWith('p1', { status: 'approved' }));
    fireEvent.click(card('Ignore the rules').getByRole('button', { name: /Reject/ }));
    await waitFor(() => expect(updateKnowledge).toHaveBeenCalledWith('p2', { status: 'rejected' }));
  });

  it('edits a proposal, then approves it with the edits', async () => {
    vi.mocked(updateKnowledge).mockResolvedValue(item({ id: 'p1', status: 'approved' }));
    show('editor');
    await waitFor(() => screen.getAllByTestId('knowledge-item'));
    fireEvent.click(card('prise is price').getByRole('button', { name: /Edit then approve/ }));
    const dialog = within(await screen.findByTestId('item-dialog'));
    fireEvent.change(dialog.getByLabelText('Title'), { target: { value: 'prise is the old price' } });
    fireEvent.click(dialog.getByRole('button', { name: 'Save and approve' }));
    await waitFor(() =>
      expect(updateKnowledge).toHaveBeenCalledWith('p1', {
        title: 'prise is the old price',
        body: '<b>prise</b> is the old name of price',
        applies_to: { file_id: 'f1', column: 'prise' },
        status: 'approved',
      }),
    );
  });

  it('adds an item, and says what is missing first', async () => {
    vi.mocked(createKnowledge).mockResolvedValue(item({ id: 'n' }));
    show('editor', []);
    await screen.findByTestId('knowledge-empty');
    fireEvent.click(screen.getByRole('button', { name: /Add item/ }));
    const dialog = within(await screen.findByTestId('item-dialog'));
    fireEvent.click(dialog.getByRole('button', { name: 'Add' }));
    expect(dialog.getByRole('alert').textContent).toBe('Give the item a title.');
    fireEvent.change(dialog.getByLabelText('Kind'), { target: { value: 'rule' } });
    fireEvent.change(dialog.getByLabelText('Title'), { target: { value: 'Revenue excludes refunds' } });
    fireEvent.change(dialog.getByLabelText('What it means'), { target: { value: 'Leave out refunded orders.' } });
    fireEvent.click(dialog.getByRole('button', { name: 'Add' }));
    await waitFor(() =>
      expect(createKnowledge).toHaveBeenCalledWith('p', { kind: 'rule', title: 'Revenue excludes refunds', body: 'Leave out refunded orders.', applies_to: null }),
    );
  });

  it('deletes an item once confirmed', async () => {
    vi.mocked(deleteKnowledge).mockResolvedValue();
    show('editor');
    await waitFor(() => screen.getAllByTestId('knowledge-item'));
    fireEvent.click(card('Active customer').getByRole('button', { name: 'Delete Active customer' }));
    expect(deleteKnowledge).not.toHaveBeenCalled();
    fireEvent.click(await screen.findByRole('button', { name: 'Delete' }));
    await waitFor(() => expect(deleteKnowledge).toHaveBeenCalledWith('a1'));
  });

  it('shows a viewer the items without a button to change them', async () => {
    show('viewer');
    await waitFor(() => expect(screen.getAllByTestId('knowledge-item')).toHaveLength(3));
    for (const li of screen.getAllByTestId('knowledge-item')) expect(within(li).queryAllByRole('button')).toEqual([]);
    expect(screen.getByRole('button', { name: /Add item/ })).toHaveProperty('disabled', true);
  });

  it('says what knowledge is for when there is none', async () => {
    show('editor', []);
    expect((await screen.findByTestId('knowledge-empty')).textContent).toBe(EMPTY_TEXT);
  });

  it('asks the server with the filters and the search', async () => {
    show('viewer');
    await waitFor(() => screen.getAllByTestId('knowledge-item'));
    fireEvent.change(screen.getByLabelText('Kind'), { target: { value: 'rule' } });
    fireEvent.change(screen.getByLabelText('Status'), { target: { value: 'proposed' } });
    fireEvent.change(screen.getByLabelText('Search the knowledge'), { target: { value: 'refund' } });
    await waitFor(() => expect(listKnowledge).toHaveBeenLastCalledWith('p', { kind: 'rule', status: 'proposed', q: 'refund' }));
  });
});
