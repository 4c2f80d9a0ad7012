import { useQuery } from '@tanstack/react-query';
import { BotOff } from 'lucide-react';
import type { ReactNode } from 'react';
import type { ModelList } from '@/client';
import { OpenDemoButton } from '@/features/demo/open-demo';
import { modelsQuery } from './queries';

/** Whether the server can answer questions at all: false only once it has said it has no model. */
export const noModelConfigured = (models: ModelList | undefined) => !!models && models.items.length === 0;

export function ModelBannerView({ models, action }: { models: ModelList | undefined; action?: ReactNode }) {
  if (!noModelConfigured(models)) return null;
  return (
    <div
      role="status"
      data-testid="model-banner"
      className="flex flex-wrap items-start gap-2 border-b border-amber-500/30 bg-amber-500/10 px-4 py-2 text-sm text-amber-800 dark:text-amber-300"
    >
      <BotOff className="mt-0.5 size-4 shrink-0" />
      <p className="min-w-0 flex-1 basis-64">
        No model is configured: questions cannot be answered until the server sets <code className="font-mono">LLM_MODEL</code> (see
        the README, Connecting an LLM).
      </p>
      {action}
    </div>
  );
}

/** A banner across the top of the app while the server has no language model to answer with; it offers the demo project. */
export function ModelBanner() {
  const models = useQuery(modelsQuery());
  return <ModelBannerView models={models.data} action={<OpenDemoButton className="h-7 bg-background/60" />} />;
}
