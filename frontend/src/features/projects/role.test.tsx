import { QueryClient, QueryClientProvider } from '@tanstack/react-query';
import { fireEvent, render, screen, within } from '@testing-library/react';
import type { ReactNode } from 'react';
import { describe, expect, it, vi } from 'vitest';
import type { FileOut, ProjectOut, RunOut } from '@/client';
import { DatasetPanel } from '@/features/files/dataset-panel';
import { fileKeys } from '@/features/files/queries';
import { replyActions } from '@/features/runs/mutations';
import { fromHistory } from '@/features/runs/run-reducer';
import { RunView } from '@/features/runs/run-view';
import { ViewerNote } from '@/features/runs/session-chat';
import { sourceKeys } from '@/features/sources/queries';
import { SourcesPanel } from '@/features/sources/sources-panel';
import { storedRun } from '@/test/runs';
import { storedSource } from '@/test/sources';
import { ProjectRoleProvider, blockedFor, type Role } from './role';
import { UsagePanel } from './usage-panel';

vi.mock('@/client', async (original) => ({
  ...(await original<typeof import('@/client')>()),
  listSources: vi.fn(async () => ({ data: { items: [], total: 0 } })),
}));

const VIEWER_UPLOAD = "Viewers can't upload files; ask an owner to make you an editor.";

function as(role: Role, ui: ReactNode, seed?: (qc: QueryClient) => void) {
  const qc = new QueryClient({ defaultOptions: { queries: { staleTime: Infinity, retry: false } } });
  seed?.(qc);
  return render(
    <QueryClientProvider client={qc}>
      <ProjectRoleProvider value={role}>{ui}</ProjectRoleProvider>
    </QueryClientProvider>,
  );
}

/** A control held back by the role: disabled, saying why on hover (on the button and the wrapper that takes the pointer). */
function expectBlocked(button: HTMLElement, why: string) {
  expect((button as HTMLButtonElement).disabled).toBe(true);
  expect(button.title).toBe(why);
  expect(button.parentElement!.title).toBe(why);
}

const file = { id: 'f', project_id: 'p', name: 'sales.csv', size: 10, content_type: 'text/csv', sha256: 'a', version: 1, created_at: '2026-01-01T00:00:00Z', updated_at: '2026-01-01T00:00:00Z' } as FileOut;
const source = storedSource();
const project = {
  id: 'p',
  name: 'Sales',
  description: '',
  role: 'editor',
  budget_usd: 5,
  budget_tokens: null,
  tokens_in: 10,
  tokens_out: 5,
  cost_usd: 0.01,
  created_at: '2026-01-01T00:00:00Z',
  updated_at: '2026-01-01T00:00:00Z',
} as ProjectOut;

describe('blockedFor', () => {
  it('lets a role do what its rank allows, and says why not otherwise', () => {
    expect(blockedFor('owner', 'owner', 'delete the project')).toBeNull();
    expect(blockedFor('editor', 'editor', 'ask questions')).toBeNull();
    expect(blockedFor('viewer', 'editor', 'ask questions')).toBe("Viewers can't ask questions; ask an owner to make you an editor.");
    expect(blockedFor('editor', 'owner', 'delete the project')).toBe('Only owners can delete the project; you are an editor of this project.');
    expect(blockedFor('viewer', 'owner', 'change budgets')).toBe('Only owners can change budgets; you are a viewer of this project.');
    // Outside a project, or while it loads, nothing is held back: the server decides.
    expect(blockedFor(null, 'owner', 'delete the project')).toBeNull();
  });
});

describe('what a role may do', () => {
  it('a viewer has no upload and no drop zone, and cannot delete a file', () => {
    as('viewer', <DatasetPanel projectId="p" />, (qc) => qc.setQueryData(fileKeys.project('p'), { items: [file], total: 1 }));
    expectBlocked(screen.getByRole('button', { name: 'Upload files' }), VIEWER_UPLOAD);
    expect(screen.queryByRole('button', { name: 'Drop files here or press to choose files' })).toBeNull();
    expectBlocked(screen.getByRole('button', { name: 'Delete sales.csv' }), "Viewers can't delete files; ask an owner to make you an editor.");
    // Reading stays: the file opens and downloads.
    expect((screen.getByRole('button', { name: 'Download sales.csv' }) as HTMLButtonElement).disabled).toBe(false);
  });

  it('an editor uploads', () => {
    as('editor', <DatasetPanel projectId="p" />, (qc) => qc.setQueryData(fileKeys.project('p'), { items: [file], total: 1 }));
    expect((screen.getByRole('button', { name: 'Upload files' }) as HTMLButtonElement).disabled).toBe(false);
    expect(screen.getByRole('button', { name: 'Drop files here or press to choose files' })).toBeTruthy();
  });

  it("an editor edits a source's name but not its credentials, and neither adds nor deletes one", () => {
    as('editor', <SourcesPanel projectId="p" />, (qc) => qc.setQueryData(sourceKeys.project('p'), { items: [source], total: 1 }));
    expectBlocked(
      screen.getByRole('button', { name: 'Add source' }),
      "Only owners can add data sources (their credentials are the owners'); you are an editor of this project.",
    );
    expectBlocked(screen.getByRole('button', { name: 'Delete warehouse' }), 'Only owners can delete data sources; you are an editor of this project.');
    fireEvent.click(screen.getByRole('button', { name: 'Edit warehouse' }));
    const dialog = screen.getByRole('dialog');
    const why = "Only owners can change a source's URL or password; you are an editor of this project.";
    expect((within(dialog).getByLabelText('Name') as HTMLInputElement).disabled).toBe(false);
    for (const label of ['URL', 'Password']) {
      const input = within(dialog).getByLabelText(label) as HTMLInputElement;
      expect(input.disabled).toBe(true);
      expect(input.title).toBe(why);
    }
  });

  it('a viewer cannot check, edit or describe a source', () => {
    as('viewer', <SourcesPanel projectId="p" />, (qc) => qc.setQueryData(sourceKeys.project('p'), { items: [source], total: 1 }));
    expectBlocked(screen.getByRole('button', { name: 'Check warehouse again' }), "Viewers can't check a source again; ask an owner to make you an editor.");
    expectBlocked(screen.getByRole('button', { name: 'Edit warehouse' }), "Viewers can't edit data sources; ask an owner to make you an editor.");
  });

  it("an editor sees the budgets but cannot change them", () => {
    as('editor', <UsagePanel project={project} />);
    const why = 'Only owners can change budgets; you are an editor of this project.';
    const tokens = within(screen.getByTestId('budget-usd'));
    expect((tokens.getByRole('textbox') as HTMLInputElement).disabled).toBe(true);
    expectBlocked(tokens.getByRole('button', { name: 'Save' }), why);
    expectBlocked(tokens.getByRole('button', { name: 'Remove the cost budget (usd)' }), why);
  });

  it('a viewer reads a running question but cannot stop it, answer the agent or decide on its code', () => {
    const waiting: RunOut = storedRun({
      status: 'waiting_input',
      steps: [{ index: 1, thought: '', code: "ask_user('Net?')", output: null, error: null, duration_ms: 1, tokens_in: 1, tokens_out: 1 }],
      pending: { kind: 'input', step: 1, question: 'Net or gross?', code: null },
    });
    as('viewer', <RunView run={fromHistory(waiting)} replies={replyActions(() => undefined)} onStop={() => undefined} />);
    expect(screen.getByTestId('question-text').textContent).toBe('Net or gross?');
    expectBlocked(screen.getByRole('button', { name: 'Answer' }), "Viewers can't answer the agent's questions; ask an owner to make you an editor.");
    expect((screen.getByRole('textbox', { name: 'Your answer' }) as HTMLTextAreaElement).disabled).toBe(true);
    expect(screen.getByTestId('waiting-for-answer').textContent).toContain('once an editor or owner replies');
    expectBlocked(screen.getByRole('button', { name: 'Stop' }), "Viewers can't stop a run; ask an owner to make you an editor.");
  });

  it('a viewer cannot approve or reject code waiting for review', () => {
    const waiting: RunOut = storedRun({
      status: 'waiting_approval',
      pending: { kind: 'approval', step: 1, question: null, code: 'print(1)' },
    });
    as('viewer', <RunView run={fromHistory(waiting)} replies={replyActions(() => undefined)} />);
    const why = "Viewers can't approve, edit or reject code; ask an owner to make you an editor.";
    expectBlocked(screen.getByRole('button', { name: 'Approve' }), why);
    expectBlocked(screen.getByRole('button', { name: /Reject/ }), why);
    expect(screen.getByTestId('waiting-for-approval').textContent).toContain('waits for an editor or owner');
  });

  it('a viewer gets a calm line instead of the question box', () => {
    as('viewer', <ViewerNote />);
    expect(screen.getByTestId('viewer-note').textContent).toContain('You are a viewer: you can follow the questions and answers as they come, but not ask.');
    expect(screen.queryByRole('textbox')).toBeNull();
  });
});
