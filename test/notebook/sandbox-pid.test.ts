import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { describe, expect, it } from 'vitest';

describe('socialstream sandbox banner', () => {
  it('prints its own pid, which kill -USR2 reaches even when a shell (like npx) stands between', async () => {
    // `; true` keeps the shell alive as the parent, as npm is when `npx socialstream sandbox &` runs.
    const script = `import('./src/sandbox/cli.ts').then((m) => m.runSandboxCommand(['--port', '0', '--advance', '3']))`;
    const child = spawn('sh', ['-c', `"${process.execPath}" --import tsx -e "${script}"; true`], {
      cwd: process.cwd(),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    // 'close' comes once every holder of the pipe is gone: the sandbox (which holds it too) and the shell.
    const closed = once(child, 'close');
    let out = '';
    child.stdout.setEncoding('utf8');
    child.stdout.on('data', (chunk: string) => (out += chunk));
    const waitFor = (pattern: RegExp) =>
      new Promise<RegExpExecArray>((resolve, reject) => {
        const check = () => {
          const match = pattern.exec(out);
          if (match === null) return;
          child.stdout.off('data', check);
          child.off('exit', onExit);
          resolve(match);
        };
        const onExit = (code: number | null) => reject(new Error(`exited early with ${code}: ${out}`));
        child.stdout.on('data', check);
        child.once('exit', onExit);
        check();
      });
    let pid: number | undefined;
    try {
      const [, printed, again] = await waitFor(/^pid (\d+): kill -USR2 (\d+) adds 3 new records to every paginated resource$/m);
      pid = Number(printed);
      expect(again).toBe(printed);
      expect(pid).not.toBe(child.pid);
      process.kill(pid, 'SIGUSR2');
      await waitFor(/has 3 new records/);
    } finally {
      try {
        if (pid !== undefined) process.kill(pid, 'SIGTERM');
        else child.kill('SIGTERM');
      } catch {
        // Already gone.
      }
      await closed;
    }
    expect(out).toContain('sandbox stopped');
  });
});
