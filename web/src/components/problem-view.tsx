import type { Problem } from '../api';

/** Problem details, readable: what happened, why, and our failure type for anyone reporting it. */
export function ProblemView({ problem, context }: { problem: Problem; context?: string }) {
  return (
    <div class="problem" role="alert">
      <p class="problem-title">
        {context ? `${context}: ` : ''}
        {problem.title}
        {problem.status ? <span class="problem-status"> (HTTP {problem.status})</span> : null}
      </p>
      <p>{problem.detail}</p>
      {problem.errors?.length ? (
        <ul>
          {problem.errors.map((e) => (
            <li key={e.path}>
              <code>{e.path}</code>: {e.message}
            </li>
          ))}
        </ul>
      ) : null}
      {problem.currentVersion !== undefined ? <p>The session is now at version {problem.currentVersion}.</p> : null}
      <p class="problem-type">
        Failure type: <code>{problem.failureType}</code>
      </p>
    </div>
  );
}
