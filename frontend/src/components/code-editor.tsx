import { Highlight, themes } from 'prism-react-renderer';
import type * as React from 'react';
import { useLayoutEffect, useRef } from 'react';
import { useTheme } from '@/lib/theme';
import { cn } from '@/lib/utils';

const INDENT = '    ';

/** One keystroke's change: replace value[from:to] with `text`, then select start..end. */
export type Replacement = { from: number; to: number; text: string; start: number; end: number };

const lineStart = (value: string, at: number) => value.lastIndexOf('\n', at - 1) + 1;

/** The lines a selection touches (a selection ending at a line's start leaves that line out). */
function touchedLines(value: string, start: number, end: number): { from: number; to: number } {
  const from = lineStart(value, start);
  const last = end > start && value[end - 1] === '\n' ? end - 1 : end;
  const nl = value.indexOf('\n', last);
  return { from, to: nl === -1 ? value.length : nl };
}

/** Tab: four spaces at the caret, or every touched line indented when the selection spans lines. */
export function indentEdit(value: string, start: number, end: number): Replacement {
  if (!value.slice(start, end).includes('\n')) {
    return { from: start, to: end, text: INDENT, start: start + INDENT.length, end: start + INDENT.length };
  }
  const { from, to } = touchedLines(value, start, end);
  const lines = value.slice(from, to).split('\n');
  const text = lines.map((l) => INDENT + l).join('\n');
  return { from, to, text, start: start + INDENT.length, end: end + INDENT.length * lines.length };
}

/** Shift+Tab: up to four leading spaces (or one tab) off every touched line. */
export function dedentEdit(value: string, start: number, end: number): Replacement {
  const { from, to } = touchedLines(value, start, end);
  const lines = value.slice(from, to).split('\n');
  const cut = lines.map((l) => (l.startsWith('\t') ? 1 : (/^ {0,4}/.exec(l)?.[0].length ?? 0)));
  const text = lines.map((l, i) => l.slice(cut[i])).join('\n');
  const removed = cut.reduce((a, b) => a + b, 0);
  return {
    from,
    to,
    text,
    start: Math.max(from, start - cut[0]),
    end: Math.max(from, end - removed),
  };
}

/** Enter: a new line indented like the current one, one level deeper after a colon. */
export function newlineEdit(value: string, start: number, end: number): Replacement {
  const before = value.slice(lineStart(value, start), start);
  const indent = /^[ \t]*/.exec(before)?.[0] ?? '';
  const text = `\n${indent}${before.trimEnd().endsWith(':') ? INDENT : ''}`;
  return { from: start, to: end, text, start: start + text.length, end: start + text.length };
}

/**
 * A code editor for short Python blocks: a textarea over the same highlighting the code blocks
 * use. Tab and Shift+Tab indent, Enter keeps the indentation, Escape then Tab leaves the editor
 * (so the keyboard is never trapped); Ctrl/Cmd+Enter calls `onSubmit`.
 */
export function CodeEditor({
  value,
  onChange,
  onSubmit,
  className,
  ...props
}: {
  value: string;
  onChange: (value: string) => void;
  onSubmit?: () => void;
} & Omit<React.ComponentProps<'textarea'>, 'value' | 'onChange' | 'onSubmit'>) {
  const theme = useTheme();
  const area = useRef<HTMLTextAreaElement>(null);
  const selection = useRef<[number, number] | null>(null);
  const tabLeaves = useRef(false);

  // After a change made by hand (no execCommand), put the caret where the edit says.
  useLayoutEffect(() => {
    const el = area.current;
    if (el && selection.current) {
      el.setSelectionRange(...selection.current);
      selection.current = null;
    }
  }, [value]);

  const apply = (el: HTMLTextAreaElement, r: Replacement) => {
    el.setSelectionRange(r.from, r.to);
    // insertText keeps the browser's undo history; where it is missing the value is set directly.
    const done = typeof document.execCommand === 'function' && document.execCommand('insertText', false, r.text);
    if (done && el.value.slice(r.from, r.from + r.text.length) === r.text) {
      el.setSelectionRange(r.start, r.end);
      return;
    }
    selection.current = [r.start, r.end];
    onChange(value.slice(0, r.from) + r.text + value.slice(r.to));
  };

  const onKeyDown = (e: React.KeyboardEvent<HTMLTextAreaElement>) => {
    const el = e.currentTarget;
    if (e.key === 'Escape') {
      tabLeaves.current = true;
      return;
    }
    const leaving = tabLeaves.current;
    tabLeaves.current = false;
    if (e.key === 'Tab' && leaving) return; // let focus move on
    if (e.nativeEvent.isComposing) return;
    if (e.key === 'Enter' && (e.ctrlKey || e.metaKey)) {
      e.preventDefault();
      onSubmit?.();
    } else if (e.key === 'Tab') {
      e.preventDefault();
      apply(el, (e.shiftKey ? dedentEdit : indentEdit)(el.value, el.selectionStart, el.selectionEnd));
    } else if (e.key === 'Enter' && !e.shiftKey && !e.altKey) {
      e.preventDefault();
      apply(el, newlineEdit(el.value, el.selectionStart, el.selectionEnd));
    }
  };

  // The textarea's text is transparent over the highlighted copy below it: both wrap the same
  // way (same font, padding and wrapping), so the caret and the selection fall on the colours.
  const layer = 'm-0 p-3 font-mono text-[13px] leading-relaxed whitespace-pre-wrap [overflow-wrap:anywhere] [tab-size:4]';
  return (
    <div className={cn('relative rounded-lg border bg-code focus-within:border-primary focus-within:ring-2 focus-within:ring-primary/20', className)}>
      <Highlight code={value} language="python" theme={theme === 'dark' ? themes.vsDark : themes.github}>
        {({ tokens, getLineProps, getTokenProps }) => (
          <pre aria-hidden className={layer} style={{ background: 'transparent' }}>
            {tokens.map((line, i) => (
              <div key={i} {...getLineProps({ line })}>
                {line.map((token, key) => (
                  <span key={key} {...getTokenProps({ token })} />
                ))}
              </div>
            ))}
          </pre>
        )}
      </Highlight>
      <textarea
        ref={area}
        spellCheck={false}
        autoCapitalize="off"
        autoComplete="off"
        autoCorrect="off"
        className={cn(
          layer,
          'absolute inset-0 size-full resize-none overflow-hidden bg-transparent text-transparent caret-foreground outline-none selection:bg-primary/25 focus-visible:outline-none',
        )}
        value={value}
        onChange={(e) => onChange(e.target.value)}
        onKeyDown={onKeyDown}
        {...props}
      />
    </div>
  );
}
