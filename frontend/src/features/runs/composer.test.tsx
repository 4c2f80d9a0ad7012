import { QueryClient, QueryClientProvider } from '@tanstack/react-query';
import { act, fireEvent, render, screen } from '@testing-library/react';
import { describe, expect, it, vi } from 'vitest';
import type { SandboxStatusOut } from '@/client';
import { fileKeys } from '@/features/files/queries';
import { sourceKeys } from '@/features/sources/queries';
import { systemKeys } from '@/features/system/queries';
import { sandboxStatus } from '@/features/system/sandbox-status.fixture';
import { PHONE } from '@/lib/media';
import { fakeMatchMedia } from '@/test/media';
import { Composer } from './composer';

const RUNNING = sandboxStatus();

function setup(
  models: { id: string; label: string; default: boolean }[],
  sandbox: SandboxStatusOut = RUNNING,
  waiting: { waitingFor: 'input' | 'approval'; onShowWaiting: () => void } | null = null,
) {
  const qc = new QueryClient({ defaultOptions: { queries: { staleTime: Infinity, retry: false } } });
  qc.setQueryData(['models'], { items: models });
  qc.setQueryData(systemKeys.sandbox, sandbox);
  qc.setQueryData(fileKeys.project('p'), {
    items: [{ id: 'f1', project_id: 'p', name: 'sales.csv', size: 1, content_type: 'text/csv', sha256: '', created_at: '', updated_at: '' }],
    total: 1,
  });
  const onSend = vi.fn();
  render(
    <QueryClientProvider client={qc}>
      <Composer projectId="p" busy={!!waiting} onSend={onSend} {...waiting} />
    </QueryClientProvider>,
  );
  return onSend;
}

describe('Composer', () => {
  it('sends on Enter with the default model and pinned files; Shift+Enter does not send', () => {
    const onSend = setup([
      { id: 'a', label: 'A', default: false },
      { id: 'b', label: 'B', default: true },
    ]);
    const box = screen.getByRole('textbox', { name: 'Ask a question about your data' });
    fireEvent.change(box, { target: { value: 'Top region?' } });
    fireEvent.keyDown(box, { key: 'Enter', shiftKey: true });
    expect(onSend).not.toHaveBeenCalled();
    fireEvent.click(screen.getByRole('button', { name: 'Pin files' }));
    fireEvent.click(screen.getByRole('button', { name: 'sales.csv' }));
    fireEvent.keyDown(box, { key: 'Enter' });
    expect(onSend).toHaveBeenCalledWith({ query: 'Top region?', model: 'b', fileIds: ['f1'] });
    expect((box as HTMLTextAreaElement).value).toBe('');
  });

  it('gives a refused question back to the box (over budget), and keeps what was typed since', async () => {
    let refuse: (taken: boolean) => void = () => undefined;
    const onSend = setup([{ id: 'a', label: 'A', default: true }]);
    onSend.mockImplementation(() => new Promise<boolean>((resolve) => (refuse = resolve)));
    const box = screen.getByRole('textbox', { name: 'Ask a question about your data' }) as HTMLTextAreaElement;
    fireEvent.change(box, { target: { value: 'Revenue by month, as a chart?' } });
    fireEvent.keyDown(box, { key: 'Enter' });
    expect(box.value).toBe('');
    await act(async () => refuse(false));
    expect(box.value).toBe('Revenue by month, as a chart?');

    fireEvent.keyDown(box, { key: 'Enter' });
    fireEvent.change(box, { target: { value: 'Something else' } });
    await act(async () => refuse(false));
    expect(box.value).toBe('Something else');

    fireEvent.change(box, { target: { value: 'Top region?' } });
    fireEvent.keyDown(box, { key: 'Enter' });
    await act(async () => refuse(true));
    expect(box.value).toBe('');
  });

  it('hints at Enter to send on a computer, not on a phone', () => {
    const media = fakeMatchMedia((q) => q === PHONE);
    setup([{ id: 'a', label: 'A', default: true }]);
    const box = () => screen.getByRole('textbox', { name: 'Ask a question about your data' }) as HTMLTextAreaElement;
    expect(box().placeholder).toBe('Ask a question about your data…');
    act(() => media.change(PHONE, false));
    expect(box().placeholder).toBe('Ask a question about your data…  (Enter to send, Shift+Enter for a new line)');
    media.restore();
  });

  it('says why it cannot send, before anything is typed, while the server has no model', () => {
    const onSend = setup([]);
    expect(screen.getByTestId('composer-disabled').textContent).toBe(
      'Questions cannot be sent: the server has no model configured (LLM_MODEL).',
    );
    const box = screen.getByRole('textbox', { name: 'Ask a question about your data' }) as HTMLTextAreaElement;
    expect(box.disabled).toBe(true);
    expect(box.placeholder).toBe('Questions cannot be answered until a model is configured.');
    fireEvent.keyDown(box, { key: 'Enter' });
    expect(onSend).not.toHaveBeenCalled();
    expect((screen.getByRole('button', { name: 'Send' }) as HTMLButtonElement).disabled).toBe(true);
    expect(screen.queryByRole('combobox', { name: 'Model' })).toBeNull();
  });

  it('is disabled, saying why, while analysis is disabled', () => {
    const onSend = setup([{ id: 'a', label: 'A', default: true }], {
      ...RUNNING,
      available: false,
      mechanism: null,
      detail: 'bubblewrap cannot create a namespace here',
      fix: 'Set SANDBOX_ISOLATION=none',
    });
    expect(screen.getByTestId('composer-disabled').textContent).toBe(
      'Analysis is disabled: bubblewrap cannot create a namespace here. Fix: Set SANDBOX_ISOLATION=none.',
    );
    const box = screen.getByRole('textbox', { name: 'Ask a question about your data' }) as HTMLTextAreaElement;
    expect(box.disabled).toBe(true);
    fireEvent.change(box, { target: { value: 'Top region?' } });
    fireEvent.keyDown(box, { key: 'Enter' });
    expect(onSend).not.toHaveBeenCalled();
    expect((screen.getByRole('button', { name: 'Send' }) as HTMLButtonElement).disabled).toBe(true);
  });

  it('waits, saying for what, while the run waits for an answer or an approval', () => {
    const onShowWaiting = vi.fn();
    const onSend = setup([{ id: 'a', label: 'A', default: true }], RUNNING, { waitingFor: 'input', onShowWaiting });
    expect(screen.getByTestId('composer-waiting').textContent).toContain('Answer the question above to continue.');
    const box = screen.getByRole('textbox', { name: 'Ask a question about your data' }) as HTMLTextAreaElement;
    expect(box.disabled).toBe(true);
    fireEvent.keyDown(box, { key: 'Enter' });
    expect(onSend).not.toHaveBeenCalled();
    fireEvent.click(screen.getByRole('button', { name: 'Go to the question' }));
    expect(onShowWaiting).toHaveBeenCalled();
  });
});

function setupCells(models: { id: string; label: string; default: boolean }[], sources: string[] = []) {
  const qc = new QueryClient({ defaultOptions: { queries: { staleTime: Infinity, retry: false } } });
  qc.setQueryData(['models'], { items: models });
  qc.setQueryData(systemKeys.sandbox, RUNNING);
  qc.setQueryData(fileKeys.project('p'), { items: [], total: 0 });
  qc.setQueryData(sourceKeys.project('p'), {
    items: sources.map((name) => ({ id: `id-${name}`, name })),
    total: sources.length,
  });
  const onSend = vi.fn();
  render(
    <QueryClientProvider client={qc}>
      <Composer projectId="p" busy={false} onSend={onSend} />
    </QueryClientProvider>,
  );
  return onSend;
}

describe('Composer cells', () => {
  it('runs Python with Ctrl+Enter (a plain Enter is a new line) and keeps the code in the box', () => {
    const onSend = setupCells([{ id: 'a', label: 'A', default: true }]);
    fireEvent.click(screen.getByRole('radio', { name: 'Python' }));
    const box = screen.getByRole('textbox', { name: 'Python to run in the session' }) as HTMLTextAreaElement;
    expect(box.className).toContain('font-mono');
    expect(screen.queryByRole('button', { name: 'Pin files' })).toBeNull();
    fireEvent.change(box, { target: { value: 'print(1)' } });
    fireEvent.keyDown(box, { key: 'Enter' });
    expect(onSend).not.toHaveBeenCalled();
    fireEvent.keyDown(box, { key: 'Enter', ctrlKey: true });
    expect(onSend).toHaveBeenCalledWith({ query: 'print(1)', model: null, fileIds: [], cell: { language: 'python' } });
    expect(box.value).toBe('print(1)');
    fireEvent.keyDown(box, { key: 'Enter', metaKey: true });
    expect(onSend).toHaveBeenCalledTimes(2);
  });

  it('runs SQL on the source picked', () => {
    const onSend = setupCells([{ id: 'a', label: 'A', default: true }], ['shop', 'lite']);
    fireEvent.click(screen.getByRole('radio', { name: 'SQL' }));
    const box = screen.getByRole('textbox', { name: 'SQL to run on a source' });
    fireEvent.change(screen.getByRole('combobox', { name: 'Source' }), { target: { value: 'lite' } });
    fireEvent.change(box, { target: { value: 'SELECT 1' } });
    fireEvent.click(screen.getByRole('button', { name: 'Run the cell' }));
    expect(onSend).toHaveBeenCalledWith({ query: 'SELECT 1', model: null, fileIds: [], cell: { language: 'sql', source: 'lite' } });
  });

  it('says SQL needs a source when the project has none', () => {
    const onSend = setupCells([{ id: 'a', label: 'A', default: true }], []);
    fireEvent.click(screen.getByRole('radio', { name: 'SQL' }));
    expect(screen.getByTestId('composer-disabled').textContent).toContain('This project has no data sources');
    expect((screen.getByRole('button', { name: 'Run the cell' }) as HTMLButtonElement).disabled).toBe(true);
    expect(onSend).not.toHaveBeenCalled();
  });

  it('with no model, offers cells, which run', () => {
    const onSend = setupCells([]);
    fireEvent.click(screen.getByTestId('composer-try-cells'));
    expect(screen.queryByTestId('composer-disabled')).toBeNull();
    const box = screen.getByRole('textbox', { name: 'Python to run in the session' }) as HTMLTextAreaElement;
    expect(box.disabled).toBe(false);
    fireEvent.change(box, { target: { value: 'x = 1' } });
    fireEvent.keyDown(box, { key: 'Enter', ctrlKey: true });
    expect(onSend).toHaveBeenCalledWith({ query: 'x = 1', model: null, fileIds: [], cell: { language: 'python' } });
  });
});
