import { QueryClient, QueryClientProvider } from '@tanstack/react-query';
import { createEvent, fireEvent, render, screen, waitFor, within } from '@testing-library/react';
import { MemoryRouter } from 'react-router';
import { beforeEach, describe, expect, it, vi } from 'vitest';
import type { ColumnProfile, FileOut } from '@/client';
import { fileKeys } from '@/features/files/queries';
import { uploadFile } from '@/features/files/upload';
import { sessionKeys } from '@/features/sessions/queries';
import { sandboxStatus } from '@/features/system/sandbox-status.fixture';
import { systemKeys } from '@/features/system/queries';
import { runKeys } from './queries';
import { SessionChat } from './session-chat';

vi.mock('@/features/files/upload', async (original) => ({
  ...(await original<typeof import('@/features/files/upload')>()),
  uploadFile: vi.fn(),
}));

const file = (id: string, name: string, over: Partial<FileOut> = {}): FileOut => ({
  id,
  project_id: 'p',
  name,
  size: 2048,
  content_type: 'text/csv',
  sha256: `sha-${id}`,
  version: 1,
  created_at: '',
  updated_at: '',
  check: 'ok',
  problem: null,
  ...over,
});
const col = (name: string, type: ColumnProfile['type'], distinct: number): ColumnProfile => ({
  name,
  dtype: 'x',
  kind: type === 'number' ? 'number' : type === 'date' ? 'datetime' : 'text',
  type,
  missing: 0,
  distinct,
});

function mount() {
  const qc = new QueryClient({ defaultOptions: { queries: { staleTime: Infinity, retry: false } } });
  qc.setQueryData(['models'], { items: [{ id: 'm', label: 'M', default: true }] });
  qc.setQueryData(systemKeys.sandbox, sandboxStatus());
  qc.setQueryData(runKeys.session('s'), { items: [], total: 0 });
  qc.setQueryData(sessionKeys.detail('s'), { id: 's', project_id: 'p', title: 'New session', autonomy: 'auto', tokens_in: 0, tokens_out: 0, cost_usd: null, created_at: '', updated_at: '' });
  qc.setQueryData(fileKeys.project('p'), { items: [file('f1', 'big.csv'), file('f2', 'notes.md', { check: 'not_tabular' })], total: 2 });
  qc.setQueryData(fileKeys.profile('f1', 'sha-f1'), {
    row_count: 240,
    rows_profiled: 240,
    complete: true,
    columns: [col('region', 'text', 4), col('day', 'date', 60), col('revenue', 'number', 200)],
  });
  render(
    <QueryClientProvider client={qc}>
      <MemoryRouter>
        <SessionChat projectId="p" sessionId="s" />
      </MemoryRouter>
    </QueryClientProvider>,
  );
}

const dropFiles = (target: HTMLElement, files: File[]) => {
  const event = createEvent.drop(target);
  Object.defineProperty(event, 'dataTransfer', { value: { files, types: ['Files'] } });
  fireEvent(target, event);
};

describe('an empty session', () => {
  beforeEach(() => {
    vi.mocked(uploadFile).mockReset();
    vi.mocked(uploadFile).mockImplementation(async (_p, f) => file('new', f.name, { version: f.name === 'big.csv' ? 2 : 1 }));
  });

  it('lists the datasets the agent can read, pins one (marked here and in the composer), and says what pinning means', () => {
    mount();
    const list = screen.getByTestId('start-datasets');
    expect(within(list).getAllByRole('listitem').map((li) => li.getAttribute('data-file'))).toEqual(['big.csv', 'notes.md']);
    expect(screen.getByTestId('pin-explained').textContent).toContain('pinning files (here or with “Pin files” under the question box) tells it which ones your question is about');
    fireEvent.click(within(list).getByRole('button', { name: 'Pin big.csv' }));
    expect(list.querySelector('[data-file="big.csv"]')?.getAttribute('data-pinned')).toBe('true');
    expect(screen.getByRole('button', { name: /1 pinned/ })).toBeTruthy();
  });

  it("offers questions written from the files' columns; a click puts one in the question box", () => {
    mount();
    const offered = within(screen.getByTestId('suggestions')).getAllByRole('button');
    expect(offered.map((b) => b.textContent)).toEqual(['What is the total revenue by region?', 'How does revenue change over day? Chart it.']);
    fireEvent.click(offered[0]);
    const box = screen.getByRole('textbox', { name: 'Ask a question about your data' }) as HTMLTextAreaElement;
    expect(box.value).toBe('What is the total revenue by region?');
    expect(document.activeElement).toBe(box);
  });

  it('adds a file dropped on the chat to the project, asking first when the name is taken', async () => {
    mount();
    const chat = screen.getByTestId('session-chat');
    dropFiles(chat, [new File(['a,b\n1,2\n'], 'q3.csv')]);
    await waitFor(() => expect(vi.mocked(uploadFile).mock.calls.map((c) => [c[0], c[1].name])).toEqual([['p', 'q3.csv']]));
    dropFiles(chat, [new File(['a,b\n1,2\n'], 'big.csv')]);
    const dialog = screen.getByRole('dialog', { name: 'Replace big.csv?' });
    expect(uploadFile).toHaveBeenCalledTimes(1);
    fireEvent.click(within(dialog).getByRole('button', { name: 'Upload as v2' }));
    await waitFor(() => expect(vi.mocked(uploadFile).mock.calls.map((c) => c[1].name)).toEqual(['q3.csv', 'big.csv']));
  });
});
