import { Fragment } from 'react';
import type { ApprovalDecision } from '@/client';
import { ArtifactView } from '@/features/runs/artifact-view';
import { groupArtifacts } from '@/features/runs/artifacts';
import { openApproval, type RunView } from '@/features/runs/run-reducer';
import { StepCard } from '@/features/runs/step-card';
import { RepairNote } from './repair-note';

/** One attempt's steps (with the code, output and errors of each), its repairs after the step they repaired, and its results. */
export function LaneFlow({
  view,
  live,
  open,
  decide,
}: {
  view: RunView;
  live?: boolean;
  open?: boolean;
  /** Where the decision on this attempt's code goes when it waits for approval (a repair, with review_repairs). */
  decide?: (decision: ApprovalDecision) => Promise<unknown>;
}) {
  const waiting = openApproval(view);
  const indexes = new Set(view.steps.map((s) => s.index));
  const at = [...new Set([...indexes, ...view.repairs.map((r) => r.step)])].sort((a, b) => a - b);
  const loose = view.artifacts.filter((a) => a.step == null || !indexes.has(a.step));
  return (
    <div className="space-y-3" data-testid="attempt-steps">
      {at.map((index) => {
        const step = view.steps.find((s) => s.index === index);
        return (
          <Fragment key={index}>
            {step && (
              <StepCard
                step={step}
                live={live}
                nextStep={view.steps.find((x) => x.index > index)?.index}
                artifacts={view.artifacts.filter((a) => a.step === index)}
                approval={view.approvals.findLast((a) => a.step === index)}
                review={decide && waiting?.step === index ? decide : undefined}
                defaultOpen={open}
              />
            )}
            {view.repairs
              .filter((r) => r.step === index)
              .map((r, i) => (
                <RepairNote key={`repair-${index}-${i}`} repair={r} />
              ))}
          </Fragment>
        );
      })}
      {groupArtifacts(loose).map((i) => (
        <ArtifactView key={i.artifact.id} artifact={i.artifact} csv={i.csv} />
      ))}
    </div>
  );
}
