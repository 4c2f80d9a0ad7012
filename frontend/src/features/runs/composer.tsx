import { useQuery } from '@tanstack/react-query';
import { ArrowUp, MessageCircleQuestion, Paperclip, Play, ShieldQuestion, Square } from 'lucide-react';
import { useState, type Dispatch, type SetStateAction } from 'react';
import type { CellOut } from '@/client';
import { Button } from '@/components/ui/button';
import { Textarea } from '@/components/ui/input';
import { Segmented } from '@/components/ui/segmented';
import { AttemptsSwitch, useAttemptsChoice } from '@/features/attempts/attempts-switch';
import { filesQuery } from '@/features/files/queries';
import { sourcesQuery } from '@/features/sources/queries';
import { noModelConfigured } from '@/features/system/model-banner';
import { ModelSelect, useModelChoice } from '@/features/system/model-select';
import { modelsQuery, sandboxStatusQuery } from '@/features/system/queries';
import { disabledReason } from '@/features/system/sandbox-banner';
import { PHONE, useMediaQuery } from '@/lib/media';
import { cn } from '@/lib/utils';

/** What the composer says, in place of sending, while the server has no model. */
export const NO_MODEL_REASON = 'Questions cannot be sent: the server has no model configured (LLM_MODEL).';

/** What the composer sends: a question to the agent, or a cell of the user's own code. */
export type ComposerMode = 'ask' | 'python' | 'sql';

const MODES: { value: ComposerMode; content: string }[] = [
  { value: 'ask', content: 'Ask' },
  { value: 'python', content: 'Python' },
  { value: 'sql', content: 'SQL' },
];

/** Whether a key press runs a cell: Ctrl+Enter (Cmd+Enter on a Mac); a plain Enter is a new line of code. */
export const runsCell = (e: { key: string; ctrlKey: boolean; metaKey: boolean }) => e.key === 'Enter' && (e.ctrlKey || e.metaKey);

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
  draft,
}: {
  projectId: string;
  busy: boolean;
  /** The session's run waits for the user: a new question waits until it is answered (or stopped). */
  waitingFor?: 'input' | 'approval' | null;
  onShowWaiting?: () => void;
  /** Sends the question; a promise of false (refused: over budget, busy…) gives the text back to the box. */
  onSend: (q: { query: string; model: string | null; fileIds: string[]; cell?: CellOut; attempts?: number }) => void | Promise<boolean>;
  onStop?: () => void;
  /**
   * The question being typed and the files pinned to it, when the chat holds them (a suggested
   * question fills the box; the empty session pins files too); else the composer holds its own.
   */
  draft?: {
    text: string;
    setText: Dispatch<SetStateAction<string>>;
    pinned: string[];
    setPinned: Dispatch<SetStateAction<string[]>>;
  };
}) {
  const models = useQuery(modelsQuery());
  const files = useQuery(filesQuery(projectId));
  const sandbox = useQuery(sandboxStatusQuery());
  const noModel = noModelConfigured(models.data);
  const [mode, setMode] = useState<ComposerMode>('ask');
  const coding = mode !== 'ask';
  const sources = useQuery({ ...sourcesQuery(projectId), enabled: mode === 'sql' });
  const [code, setCode] = useState('');
  const [source, setSource] = useState<string | null>(null);
  const chosenSource = source ?? sources.data?.items[0]?.name ?? null;
  // Why nothing can be sent right now: said before the user types, not after a refused request.
  const blocked =
    sandbox.data && !sandbox.data.available
      ? { reason: disabledReason(sandbox.data), tone: 'error', placeholder: 'Questions cannot be answered until analysis is enabled.' }
      : noModel && !coding
        ? { reason: NO_MODEL_REASON, tone: 'warning', placeholder: 'Questions cannot be answered until a model is configured.' }
        : mode === 'sql' && sources.data && !sources.data.items.length
          ? { reason: 'This project has no data sources: add one in the project\'s Sources to run SQL.', tone: 'warning', placeholder: 'No source to query.' }
          : null;
  const disabled = blocked?.reason ?? null;
  // A phone's keyboard has no Enter to speak of: no hint about it there.
  const phone = useMediaQuery(PHONE);
  const [ownText, setOwnText] = useState('');
  const [ownPinned, setOwnPinned] = useState<string[]>([]);
  const [text, setText] = draft ? [draft.text, draft.setText] : [ownText, setOwnText];
  const [pinned, setPinned] = draft ? [draft.pinned, draft.setPinned] : [ownPinned, setOwnPinned];
  const [model, setModel] = useModelChoice(models.data);
  const [showFiles, setShowFiles] = useState(false);
  const attempts = useAttemptsChoice(projectId);

  const waiting = waitingFor ? WAITING[waitingFor] : null;
  const runCell = () => {
    if (!code.trim() || busy || disabled || waiting) return;
    const cell: CellOut = mode === 'sql' ? { language: 'sql', source: chosenSource } : { language: 'python' };
    // The code stays in the box after it runs (as in a notebook): changed and run again.
    void onSend({ query: code, model: null, fileIds: [], cell });
  };
  const send = () => {
    if (coding) return runCell();
    const query = text.trim();
    if (!query || busy || disabled || waiting) return;
    const sent = onSend({ query, model, fileIds: pinned, ...(attempts.attempts != null && { attempts: attempts.attempts }) });
    setText('');
    // A refused question is not thrown away: it comes back to the box, unless something new was typed.
    void sent?.then((taken) => {
      if (!taken) setText((now) => (now.trim() ? now : text));
    });
  };

  return (
    <div className="rounded-2xl border bg-card shadow-sm focus-within:border-primary/60 focus-within:ring-2 focus-within:ring-primary/10">
      {blocked && (
        <p
          className={cn(
            'border-b px-4 py-2 text-sm',
            blocked.tone === 'error' ? 'text-destructive' : 'rounded-t-2xl border-amber-500/30 bg-amber-500/10 text-amber-800 dark:text-amber-300',
          )}
          data-testid="composer-disabled"
        >
          {blocked.reason}
        </p>
      )}
      {noModel && mode === 'ask' && !(sandbox.data && !sandbox.data.available) && (
        // Cells need no model: the way to work meanwhile.
        <button
          type="button"
          className="w-full cursor-pointer border-b px-4 py-1.5 text-left text-xs font-medium text-primary underline-offset-4 hover:underline"
          onClick={() => setMode('python')}
          data-testid="composer-try-cells"
        >
          Run your own Python or SQL instead: cells need no model →
        </button>
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
      {coding ? (
        <Textarea
          aria-label={mode === 'sql' ? 'SQL to run on a source' : 'Python to run in the session'}
          data-composer
          data-testid="cell-editor"
          spellCheck={false}
          placeholder={
            blocked
              ? blocked.placeholder
              : waiting
                ? waiting.placeholder
                : mode === 'sql'
                  ? `SELECT … — its result is kept as a DataFrame (name it with -- into: name)${phone ? '' : '  (Ctrl+Enter to run)'}`
                  : `Python in this session's sandbox, with the agent's variables${phone ? '' : '  (Ctrl+Enter to run)'}`
          }
          className="max-h-72 min-h-[5.5rem] border-0 bg-transparent px-4 pt-3 font-mono text-[13px] shadow-none focus-visible:ring-0 disabled:cursor-not-allowed"
          disabled={!!disabled || !!waiting}
          rows={4}
          value={code}
          onChange={(e) => setCode(e.target.value)}
          onKeyDown={(e) => {
            if (runsCell(e) && !e.nativeEvent.isComposing) {
              e.preventDefault();
              runCell();
            }
          }}
        />
      ) : (
        <Textarea
          aria-label="Ask a question about your data"
          data-composer
          placeholder={
            blocked
              ? blocked.placeholder
              : waiting
                ? waiting.placeholder
                : phone
                  ? 'Ask a question about your data…'
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
      )}
      {showFiles && !coding && (
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
      <div className="flex flex-wrap items-center gap-x-2 gap-y-1 px-2 pb-2">
        <Segmented
          label="What to send"
          items={MODES}
          value={mode}
          onChange={setMode}
          className="grid-cols-3 p-0.5 [&>button]:px-2.5 [&>button]:py-1 [&>button]:text-xs"
        />
        {mode === 'ask' && (
          <>
            <Button
              variant="ghost"
              size="sm"
              onClick={() => setShowFiles(!showFiles)}
              aria-expanded={showFiles}
              className={cn(pinned.length > 0 && 'text-primary')}
            >
              <Paperclip /> {pinned.length ? `${pinned.length} pinned` : 'Pin files'}
            </Button>
            <ModelSelect
              models={models.data}
              value={model}
              onChange={setModel}
              className="max-w-48 border-0 bg-transparent hover:bg-muted"
            />
            <AttemptsSwitch choice={attempts} disabled={!!disabled} />
          </>
        )}
        {mode === 'sql' && !!sources.data?.items.length && (
          <select
            aria-label="Source"
            className="h-8 max-w-48 cursor-pointer truncate rounded-md bg-transparent px-2 text-xs text-muted-foreground hover:bg-muted"
            value={chosenSource ?? ''}
            onChange={(e) => setSource(e.target.value)}
          >
            {sources.data.items.map((s) => (
              <option key={s.id} value={s.name}>
                {s.name}
              </option>
            ))}
          </select>
        )}
        <div className="flex-1" />
        {busy && onStop ? (
          <Button size="icon" variant="outline" onClick={onStop} aria-label="Stop the running query">
            <Square className="fill-current" />
          </Button>
        ) : coding ? (
          <Button size="sm" onClick={runCell} disabled={!code.trim() || busy || !!disabled} aria-label="Run the cell" title="Run (Ctrl+Enter)">
            <Play /> Run
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
