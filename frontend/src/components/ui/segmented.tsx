import type { KeyboardEvent, ReactNode } from 'react';
import { cn } from '@/lib/utils';

/**
 * A row of choices of which one is chosen (a radiogroup): one tab stop, on the choice made; the
 * arrow keys move between choices.
 */
export function Segmented<T extends string | number>({
  label,
  items,
  value,
  onChange,
  className,
}: {
  /** The group's accessible name. */
  label: string;
  items: { value: T; content: ReactNode }[];
  value: T;
  onChange: (value: T) => void;
  className?: string;
}) {
  const move = (e: KeyboardEvent<HTMLDivElement>) => {
    const step = { ArrowRight: 1, ArrowDown: 1, ArrowLeft: -1, ArrowUp: -1 }[e.key];
    if (!step) return;
    e.preventDefault();
    const at = items.findIndex((i) => i.value === value);
    const next = (at + step + items.length) % items.length;
    onChange(items[next].value);
    (e.currentTarget.children[next] as HTMLElement).focus();
  };
  return (
    <div role="radiogroup" aria-label={label} className={cn('grid gap-1 rounded-lg bg-muted p-1', className)} onKeyDown={move}>
      {items.map((item) => (
        <button
          key={item.value}
          type="button"
          role="radio"
          aria-checked={value === item.value}
          tabIndex={value === item.value ? 0 : -1}
          onClick={() => onChange(item.value)}
          className={cn(
            'cursor-pointer rounded-md px-2 py-1.5 text-sm font-medium text-muted-foreground transition-colors',
            value === item.value ? 'bg-card text-foreground shadow-xs' : 'hover:text-foreground',
          )}
        >
          {item.content}
        </button>
      ))}
    </div>
  );
}
