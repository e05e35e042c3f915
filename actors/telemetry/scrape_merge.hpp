#pragma once
// Several Prometheus text expositions (a front end's replicas', each scraped through the
// cluster) as one: each family's HELP and TYPE once, then its samples from every part in the
// parts' order, each sample with its part's label added (replica="10.0.0.1:7000"), so that a
// scraper sums or splits by replica. The exposition format wants a family's samples together
// after its TYPE; the parts are merged family by family to keep that.
#include <string>
#include <vector>

namespace courier::telemetry {

struct labelled_scrape {
  std::string label;  // name="value", added to every sample of `text`; empty: none
  std::string text;   // a Prometheus text exposition
};

std::string merge_scrapes(const std::vector<labelled_scrape>& parts);

// `sample` (one exposition line, not a comment) with `label` first among its labels.
std::string with_label(const std::string& sample, const std::string& label);

}  // namespace courier::telemetry
