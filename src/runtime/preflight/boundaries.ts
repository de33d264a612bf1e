// Preflight check boundaries (docs/semantics.md §11, §1): the loss mask of the first batch puts
// targets exactly where the policy acted. No target at position 0 or on a token the policy did
// not sample (prompt, tool results and other observations unless mask.loss: all; never padding,
// pool turns or re-rendered turns); every end-of-turn token the policy generated is a target
// (leaving it out teaches the policy never to stop); every group compares episodes of one task
// (the baseline of a group is only a baseline for its own task).
import { at } from "../../contracts/checked.js";
import type { Plan } from "../../plan/schema.js";
import { Role } from "../../episode/buffer.js";
import { firstFew, type PreflightCheckResult, type PreflightSequence } from "./batch.js";

const ROLE_NAMES: Record<number, string> = Object.fromEntries(Object.entries(Role).map(([name, id]) => [id, name]));

/** Roles that are never targets, and those that are targets only under mask.loss: all. */
const NEVER = new Set<number>([Role.padding, Role.pool, Role.rendered]);
const ONLY_UNDER_ALL = new Set<number>([Role.system, Role.prompt, Role.observation]);

export function checkBoundaries(
  sequences: readonly PreflightSequence[],
  stopIds: readonly number[],
  loss: Plan["mask"]["loss"],
): PreflightCheckResult {
  const stops = new Set(stopIds);
  const targetsByRole: Record<string, number> = {};
  const misplaced: string[] = [];
  const untrainedEnds: string[] = [];
  let ends = 0;
  let targets = 0;
  sequences.forEach((s, i) => {
    if (s.lossMask[0] === 1) misplaced.push(`token 0 of sequence ${i} (${s.label}) is a target: nothing predicts it`);
    for (let k = 0; k < s.ids.length; k++) {
      const role = at(s.roles, k);
      const target = s.lossMask[k] === 1;
      if (target) {
        targets++;
        const name = ROLE_NAMES[role] ?? `role ${role}`;
        targetsByRole[name] = (targetsByRole[name] ?? 0) + 1;
        if (k > 0 && (NEVER.has(role) || (loss === "generated" && ONLY_UNDER_ALL.has(role))))
          misplaced.push(`token ${k} of sequence ${i} (${s.label}) is a target with role ${name}`);
      }
      if (role === Role.generated && stops.has(at(s.ids, k))) {
        ends++;
        if (!target)
          untrainedEnds.push(
            `the generated end-of-turn token ${at(s.ids, k)} at token ${k} of sequence ${i} (${s.label}) is not a target`,
          );
      }
    }
  });
  const tasksOfGroup = new Map<string, Set<string>>();
  for (const s of sequences) {
    const tasks = tasksOfGroup.get(s.group) ?? new Set<string>();
    tasks.add(s.task);
    tasksOfGroup.set(s.group, tasks);
  }
  const mixedGroups = [...tasksOfGroup]
    .filter(([, tasks]) => tasks.size > 1)
    .map(([group, tasks]) => `group ${group} compares ${tasks.size} tasks (${[...tasks].join(", ")})`);
  const roles =
    Object.entries(targetsByRole)
      .map(([name, n]) => `${name} ${n}`)
      .join(", ") || "none";
  const summary = `${targets} targets (${roles}); ${ends - untrainedEnds.length} of ${ends} generated end-of-turn tokens are targets; ${tasksOfGroup.size} groups, ${tasksOfGroup.size - mixedGroups.length} with one task`;
  const numbers = {
    targets,
    ...Object.fromEntries(Object.entries(targetsByRole).map(([name, n]) => [`targets_${name}`, n])),
    misplaced_targets: misplaced.length,
    end_of_turn_tokens: ends,
    untrained_end_of_turn_tokens: untrainedEnds.length,
    groups: tasksOfGroup.size,
    mixed_groups: mixedGroups.length,
    mask_loss: loss,
  };
  const failures = [...firstFew(misplaced), ...firstFew(untrainedEnds), ...firstFew(mixedGroups)];
  if (failures.length === 0) return { check: "boundaries", status: "passed", summary, failures, numbers };
  return {
    check: "boundaries",
    status: "failed",
    summary,
    failures,
    hint: "targets are decided by the predicted token's role (docs/semantics.md §1): a target off a generated token trains on text the policy did not choose, an end-of-turn token left out teaches it never to stop, and a group of several tasks compares rewards that measure different things",
    numbers,
  };
}
