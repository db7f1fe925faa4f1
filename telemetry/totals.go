package telemetry

// Totals is what the metrics counted for one target since the start.
type Totals struct {
	InputTokens, OutputTokens float64
	CostUSD, WastedUSD        float64
}

// Totals gathers the per-target token and cost totals (for the dashboard),
// keyed by target.
func (m *Metrics) Totals() map[string]Totals {
	out := map[string]Totals{}
	if m == nil {
		return out
	}
	fams, err := m.reg.Gather()
	if err != nil {
		return out
	}
	for _, f := range fams {
		for _, s := range f.GetMetric() {
			l := map[string]string{}
			for _, p := range s.GetLabel() {
				l[p.GetName()] = p.GetValue()
			}
			switch f.GetName() {
			case "gen_ai_client_token_usage":
				t := l[lProvider] + "/" + l[lRequestModel]
				tt := out[t]
				switch l[lTokenType] {
				case "input":
					tt.InputTokens += s.GetHistogram().GetSampleSum()
				case "output":
					tt.OutputTokens += s.GetHistogram().GetSampleSum()
				}
				out[t] = tt
			case "llmguard_cost_usd_total":
				tt := out[l["target"]]
				tt.CostUSD += s.GetCounter().GetValue()
				out[l["target"]] = tt
			case "llmguard_wasted_cost_usd_total":
				tt := out[l["target"]]
				tt.WastedUSD += s.GetCounter().GetValue()
				out[l["target"]] = tt
			}
		}
	}
	return out
}
