import { useQuery } from '@tanstack/react-query';
import { Download, Loader2 } from 'lucide-react';
import { useState } from 'react';
import { toast } from 'sonner';
import { CodeBlock } from '@/components/code-block';
import { LoadState } from '@/components/notice';
import { Button } from '@/components/ui/button';
import { exportJob } from './api';
import { jobCodeQuery } from './queries';
import type { Job } from './types';

/** The job's script and its tests, read-only and highlighted, with the exports as downloads. */
export function JobCode({ job }: { job: Job }) {
  const code = useQuery(jobCodeQuery(job.id));
  const [busy, setBusy] = useState<'py' | 'ipynb' | null>(null);
  const download = (format: 'py' | 'ipynb') => {
    setBusy(format);
    exportJob(job, format)
      .catch((e: unknown) => toast.error(`Export failed: ${e instanceof Error ? e.message : 'unknown error'}`))
      .finally(() => setBusy(null));
  };
  return (
    <div className="space-y-4" data-testid="job-code">
      <div className="flex flex-wrap items-center gap-2">
        <p className="mr-auto text-sm text-muted-foreground">Runs as it is with Python outside the workbench: the script with its tests, or a notebook papermill accepts.</p>
        <Button variant="outline" size="sm" onClick={() => download('py')} disabled={busy !== null}>
          {busy === 'py' ? <Loader2 className="animate-spin" /> : <Download />} Script and tests (.zip)
        </Button>
        <Button variant="outline" size="sm" onClick={() => download('ipynb')} disabled={busy !== null}>
          {busy === 'ipynb' ? <Loader2 className="animate-spin" /> : <Download />} Notebook (.ipynb)
        </Button>
      </div>
      {!code.data ? (
        <LoadState query={code} loading="Loading the code…" />
      ) : (
        <>
          <section className="space-y-1.5" aria-label="Script">
            <h3 className="text-sm font-medium">job.py</h3>
            <CodeBlock code={code.data.script} />
          </section>
          <section className="space-y-1.5" aria-label="Tests">
            <h3 className="text-sm font-medium">test_job.py</h3>
            {code.data.tests ? (
              <CodeBlock code={code.data.tests} />
            ) : (
              <p className="text-sm text-muted-foreground">{job.checks.status === 'writing' ? 'The checks are being written…' : 'No tests.'}</p>
            )}
          </section>
        </>
      )}
    </div>
  );
}
