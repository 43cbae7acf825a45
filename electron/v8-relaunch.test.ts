import { describe, expect, it } from 'vitest';
import { V8_FLAGS_GIVEN_ENV, v8RelaunchArgs } from './v8-relaunch';

const FLAGS = ['--max-semi-space-size=16'];

describe('v8RelaunchArgs', () => {
  it('an app started without arguments relaunches with the flags after its own arguments', () => {
    expect(v8RelaunchArgs(['/opt/Belfry/belfry'], {}, FLAGS)).toEqual([
      '--js-flags=--max-semi-space-size=16',
    ]);
    expect(v8RelaunchArgs(['/usr/bin/electron', '.', '--hidden'], {}, FLAGS)).toEqual([
      '.',
      '--hidden',
      '--js-flags=--max-semi-space-size=16',
    ]);
  });

  it('a start that has the flags (npm start) does not relaunch', () => {
    expect(v8RelaunchArgs(['electron', '--js-flags=--max-semi-space-size=16', '.'], {}, FLAGS)).toBeNull();
    // Whatever value the user gave, and V8's underscore spelling of the same flag.
    expect(v8RelaunchArgs(['electron', '--js-flags=--max_semi_space_size=32'], {}, FLAGS)).toBeNull();
  });

  it('keeps the js-flags a user gave and adds the missing ones to them', () => {
    expect(v8RelaunchArgs(['electron', '--js-flags=--expose-gc', '.'], {}, FLAGS)).toEqual([
      '--js-flags=--expose-gc --max-semi-space-size=16',
      '.',
    ]);
  });

  it('does not relaunch from an AppImage (its mount is gone once this process exits)', () => {
    expect(
      v8RelaunchArgs(['/tmp/.mount_BelfryX/belfry'], { APPIMAGE: '/home/me/Belfry.AppImage' }, FLAGS),
    ).toBeNull();
  });

  it('never relaunches twice, nor without flags to add', () => {
    expect(v8RelaunchArgs(['belfry'], { [V8_FLAGS_GIVEN_ENV]: '1' }, FLAGS)).toBeNull();
    expect(v8RelaunchArgs(['belfry'], {}, [])).toBeNull();
  });
});
