import { useQuery } from '@tanstack/react-query';
import { ArrowUp, MessageCircleQuestion, Paperclip, ShieldQuestion, Square } from 'lucide-react';
import { useEffect, useState } from 'react';
import { Button } from '@/components/ui/button';
import { Textarea } from '@/components/ui/input';
import { filesQuery } from '@/features/files/queries';
import { sandboxStatusQuery } from '@/features/system/queries';
import { disabledReason } from '@/features/system/sandbox-banner';
import { cn } from '@/lib/utils';
import { modelsQuery } from './queries';

export function NoModelNotice() {
  return (
    <div className="rounded-xl border border-amber-500/30 bg-amber-500/5 p-4 text-sm" role="status" data-testid="no-model">
      <p className="font-medium">No language model is configured.</p>
      <p className="mt-1 text-muted-foreground">
        Ask the administrator to set <code className="font-mono">LLM_MODEL</code> (for example{' '}
        <code className="font-mono">openai/gpt-4o-mini</code>), <code className="font-mono">LLM_API_KEY</code> and, for a
        self-hosted or compatible endpoint, <code className="font-mono">LLM_API_BASE</code> in the server's{' '}
        <code className="font-mono">.env</code> file, then restart it. The README's configuration section lists every option.
      </p>
    </div>
  );
}

const WAITING = {
  input: {
    icon: MessageCircleQuestion,
    hint: 'Answer the question above to continue.',
    action: 'Go to the question',
    placeholder: 'The agent is waiting for your answer to its question above.',
  },
  approval: {
    icon: ShieldQuestion,
    hint: 'Approve, edit or reject the code above to continue.',
    action: 'Go to the code',
    placeholder: 'The agent is waiting for you to review its code above.',
  },
} as const;

export function Composer({
  projectId,
  busy,
  waitingFor = null,
  onShowWaiting,
  onSend,
  onStop,
}: {
  projectId: string;
  busy: boolean;
  /** The session's run waits for the user: a new question waits until it is answered (or stopped). */
  waitingFor?: 'input' | 'approval' | null;
  onShowWaiting?: () => void;
  onSend: (q: { query: string; model: string | null; fileIds: string[] }) => void;
  onStop?: () => void;
}) {
  const models = useQuery(modelsQuery());
  const files = useQuery(filesQuery(projectId));
  const sandbox = useQuery(sandboxStatusQuery());
  const disabled = sandbox.data && !sandbox.data.available ? disabledReason(sandbox.data) : null;
  const [text, setText] = useState('');
  const [model, setModel] = useState<string | null>(null);
  const [pinned, setPinned] = useState<string[]>([]);
  const [showFiles, setShowFiles] = useState(false);

  useEffect(() => {
    if (!model && models.data?.items.length) setModel((models.data.items.find((m) => m.default) ?? models.data.items[0]).id);
  }, [models.data, model]);

  if (models.data && models.data.items.length === 0) return <NoModelNotice />;

  const waiting = waitingFor ? WAITING[waitingFor] : null;
  const send = () => {
    const query = text.trim();
    if (!query || busy || disabled || waiting) return;
    onSend({ query, model, fileIds: pinned });
    setText('');
  };

  return (
    <div className="rounded-2xl border bg-card shadow-sm focus-within:border-primary/60 focus-within:ring-2 focus-within:ring-primary/10">
      {disabled && (
        <p className="border-b px-4 py-2 text-sm text-destructive" data-testid="composer-disabled">
          {disabled}
        </p>
      )}
      {waiting && !disabled && (
        <div
          className="flex flex-wrap items-center gap-x-3 gap-y-1 rounded-t-2xl border-b border-amber-500/30 bg-amber-500/10 px-4 py-2 text-sm text-amber-800 dark:text-amber-300"
          role="status"
          data-testid="composer-waiting"
        >
          <waiting.icon className="size-4 shrink-0" />
          <span className="font-medium">{waiting.hint}</span>
          {onShowWaiting && (
            <button type="button" className="ml-auto cursor-pointer text-xs font-medium underline underline-offset-4 hover:no-underline" onClick={onShowWaiting}>
              {waiting.action}
            </button>
          )}
        </div>
      )}
      <Textarea
        aria-label="Ask a question about your data"
        placeholder={
          disabled
            ? 'Questions cannot be answered until analysis is enabled.'
            : waiting
              ? waiting.placeholder
              : 'Ask a question about your data…  (Enter to send, Shift+Enter for a new line)'
        }
        className="max-h-48 min-h-[3.5rem] border-0 bg-transparent px-4 pt-3 shadow-none focus-visible:ring-0 disabled:cursor-not-allowed"
        disabled={!!disabled || !!waiting}
        rows={2}
        value={text}
        onChange={(e) => setText(e.target.value)}
        onKeyDown={(e) => {
          if (e.key === 'Enter' && !e.shiftKey && !e.nativeEvent.isComposing) {
            e.preventDefault();
            send();
          }
        }}
      />
      {showFiles && (
        <div className="flex flex-wrap gap-1.5 px-3 pb-2" aria-label="Pin files to this question">
          {files.data?.items.length === 0 && <span className="text-xs text-muted-foreground">No datasets in this project yet.</span>}
          {files.data?.items.map((f) => {
            const on = pinned.includes(f.id);
            return (
              <button
                key={f.id}
                type="button"
                aria-pressed={on}
                onClick={() => setPinned(on ? pinned.filter((x) => x !== f.id) : [...pinned, f.id])}
                className={cn(
                  'cursor-pointer rounded-full border px-2.5 py-0.5 text-xs',
                  on ? 'border-primary bg-primary/10 text-primary' : 'text-muted-foreground hover:bg-muted',
                )}
              >
                {f.name}
              </button>
            );
          })}
        </div>
      )}
      <div className="flex items-center gap-2 px-2 pb-2">
        <Button
          variant="ghost"
          size="sm"
          onClick={() => setShowFiles(!showFiles)}
          aria-expanded={showFiles}
          className={cn(pinned.length > 0 && 'text-primary')}
        >
          <Paperclip /> {pinned.length ? `${pinned.length} pinned` : 'Pin files'}
        </Button>
        <select
          aria-label="Model"
          className="h-8 max-w-48 cursor-pointer truncate rounded-md border-0 bg-transparent px-2 text-xs text-muted-foreground hover:bg-muted"
          value={model ?? ''}
          onChange={(e) => setModel(e.target.value)}
        >
          {models.data?.items.map((m) => (
            <option key={m.id} value={m.id}>
              {m.label}
            </option>
          ))}
        </select>
        <div className="flex-1" />
        {busy && onStop ? (
          <Button size="icon" variant="outline" onClick={onStop} aria-label="Stop the running query">
            <Square className="fill-current" />
          </Button>
        ) : (
          <Button size="icon" onClick={send} disabled={!text.trim() || busy || !!disabled} aria-label="Send">
            <ArrowUp />
          </Button>
        )}
      </div>
    </div>
  );
}
