package worker

import "github.com/toolcage/toolcage/daemon/catalog"

// EffectiveApproval decides the approval of one call of a tool through a
// worker. Its inputs:
//
//   - toolApproval: the approval the tool's definition writes; "" when it
//     writes none (the format's default, preApproved, is then not the
//     tool's word but the absence of one).
//   - toolCreatedBy: who wrote the tool, catalog.CreatedByUser (a person)
//     or catalog.CreatedByLLM (an agent).
//   - workerDefault: the worker's approval.default; "" when not written.
//   - workerPerTool: the worker's approval.tools entry for this tool; ""
//     when there is none.
//
// The worker's word is workerPerTool where written, else workerDefault
// (the entry for the tool is the more specific). The rules, in order:
//
//  1. A tool's own blocked is never loosened: blocked.
//  2. A person's tool that the worker explicitly pre-approves in
//     approval.tools is preApproved (the person chose, knowing both).
//  3. Where the tool writes nothing, the worker's word decides; where
//     neither speaks, the creator's default (catalog.DefaultApproval):
//     preApproved for a person's tool, ask for an agent's.
//  4. Where both speak, the stricter wins: blocked > ask > preApproved.
//  5. Where only the tool speaks, the tool decides.
//
// A worker's approval.default never counts as an explicit pre-approval: it
// tightens, it does not loosen. Values other than preApproved, ask,
// blocked and "" count as blocked, and a creator other than a person
// counts as an agent: bad input fails closed.
func EffectiveApproval(toolApproval, toolCreatedBy, workerDefault, workerPerTool string) string {
	tool, def, per := approvalValue(toolApproval), approvalValue(workerDefault), approvalValue(workerPerTool)
	worker := per
	if worker == "" {
		worker = def
	}
	switch {
	case tool == catalog.ApprovalBlocked:
		return catalog.ApprovalBlocked
	case toolCreatedBy == catalog.CreatedByUser && per == catalog.ApprovalPreApproved:
		return catalog.ApprovalPreApproved
	case tool == "" && worker == "":
		return catalog.DefaultApproval(toolCreatedBy)
	case tool == "":
		return worker
	case worker == "":
		return tool
	}
	return stricter(tool, worker)
}

// approvalValue maps an approval as written to one EffectiveApproval
// knows: unknown values become blocked.
func approvalValue(a string) string {
	switch a {
	case "", catalog.ApprovalPreApproved, catalog.ApprovalAsk, catalog.ApprovalBlocked:
		return a
	}
	return catalog.ApprovalBlocked
}

// strictness orders the approvals; higher is stricter.
func strictness(a string) int {
	switch a {
	case catalog.ApprovalAsk:
		return 1
	case catalog.ApprovalBlocked:
		return 2
	}
	return 0
}

func stricter(a, b string) string {
	if strictness(b) > strictness(a) {
		return b
	}
	return a
}
