import { describe, expect, it } from 'vitest';
import { replayDelay } from './replay';

describe('replay', () => {
  it('holds code, output and charts long enough to read, and streams the model quickly', () => {
    expect(replayDelay('step.code')).toBeGreaterThanOrEqual(1000);
    expect(replayDelay('artifact')).toBeGreaterThanOrEqual(1000);
    expect(replayDelay('model.delta')).toBeLessThan(200);
  });
});
