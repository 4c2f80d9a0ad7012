import { useEffect, useState } from 'react';
import type { ModelList } from '@/client';
import { cn } from '@/lib/utils';

/** The model chosen among those offered: the server's default until the user picks another. */
export function useModelChoice(models: ModelList | undefined) {
  const [model, setModel] = useState<string | null>(null);
  useEffect(() => {
    if (!model && models?.items.length) setModel((models.items.find((m) => m.default) ?? models.items[0]).id);
  }, [models, model]);
  return [model, setModel] as const;
}

/** A compact picker of the models a question may use (hidden when the server offers none). */
export function ModelSelect({
  models,
  value,
  onChange,
  className,
}: {
  models: ModelList | undefined;
  value: string | null;
  onChange: (model: string) => void;
  className?: string;
}) {
  return (
    <select
      hidden={!models?.items.length}
      aria-label="Model"
      className={cn('h-8 cursor-pointer truncate rounded-md px-2 text-xs text-muted-foreground', className)}
      value={value ?? ''}
      onChange={(e) => onChange(e.target.value)}
    >
      {models?.items.map((m) => (
        <option key={m.id} value={m.id}>
          {m.label}
        </option>
      ))}
    </select>
  );
}
