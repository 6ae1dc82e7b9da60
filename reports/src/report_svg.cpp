#include "report_svg.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>

namespace bitparity::reports {

namespace {

constexpr double kWidth = 440, kHeight = 230;
constexpr double kLeft = 62, kRight = 12, kTop = 54, kBottom = 40;

std::string number_text(double value) {
  char text[32];
  if (value != 0 && (std::fabs(value) < 1e-3 || std::fabs(value) >= 1e5)) {
    std::snprintf(text, sizeof text, "%.0e", value);
  } else {
    std::snprintf(text, sizeof text, "%g", value);
  }
  return text;
}

std::string fixed(double value) {
  char text[32];
  std::snprintf(text, sizeof text, "%.1f", value);
  return text;
}

struct Axis {
  double low = 0, high = 1;
  bool log = false;
  double to_unit(double v) const {  // 0 at low, 1 at high
    if (log) return (std::log10(v) - std::log10(low)) / (std::log10(high) - std::log10(low));
    return (v - low) / (high - low);
  }
  std::vector<double> ticks() const {
    std::vector<double> result;
    if (log) {
      const int first = static_cast<int>(std::ceil(std::log10(low))), last = static_cast<int>(std::floor(std::log10(high)));
      const int step = std::max(1, (last - first) / 5 + 1);
      for (int e = first; e <= last; e += step) result.push_back(std::pow(10.0, e));
      return result;
    }
    const double span = high - low;
    const double raw = span / 5;
    const double magnitude = std::pow(10.0, std::floor(std::log10(raw)));
    const double step = raw / magnitude >= 5 ? 5 * magnitude : raw / magnitude >= 2 ? 2 * magnitude : magnitude;
    for (double t = std::ceil(low / step) * step; t <= high + step * 1e-9; t += step) result.push_back(t);
    return result;
  }
};

Axis fit_axis(std::vector<double> values, bool log) {
  Axis axis;
  axis.log = log;
  if (log) {
    std::erase_if(values, [](double v) { return !(v > 0) || !std::isfinite(v); });
    if (values.empty()) values = {1e-8, 1};
    const double low = *std::min_element(values.begin(), values.end()), high = *std::max_element(values.begin(), values.end());
    axis.low = std::pow(10.0, std::floor(std::log10(low)));
    axis.high = std::pow(10.0, std::ceil(std::log10(high)));
    if (axis.high <= axis.low) axis.high = axis.low * 10;
    return axis;
  }
  std::erase_if(values, [](double v) { return !std::isfinite(v); });
  axis.low = 0;
  axis.high = values.empty() ? 1 : *std::max_element(values.begin(), values.end());
  if (axis.high <= 0) axis.high = 1;
  axis.high *= 1.05;
  return axis;
}

std::string frame(const std::string& title, const std::string& x_label, const std::string& y_label, const Axis& y,
                  const std::vector<PlotSeries>& series) {
  std::string svg = "<svg class=\"plot\" xmlns=\"http://www.w3.org/2000/svg\" width=\"" + fixed(kWidth) + "\" height=\"" +
                    fixed(kHeight) + "\" viewBox=\"0 0 " + fixed(kWidth) + " " + fixed(kHeight) + "\" role=\"img\" aria-label=\"" +
                    escape_html(title) + "\">";
  svg += "<rect x=\"0\" y=\"0\" width=\"" + fixed(kWidth) + "\" height=\"" + fixed(kHeight) + "\" fill=\"#fff\"/>";
  svg += "<text x=\"" + fixed(kWidth / 2) + "\" y=\"15\" text-anchor=\"middle\" font-size=\"12\" font-weight=\"bold\">" +
         escape_html(title) + "</text>";
  // Legend under the title, wrapped onto a second row when the first is full.
  double x = kLeft, y_row = 27;
  for (const auto& s : series) {
    const double width = 26 + 5.2 * static_cast<double>(s.name.size());
    if (x + width > kWidth - kRight && x > kLeft) {
      x = kLeft;
      y_row += 12;
    }
    svg += "<line x1=\"" + fixed(x) + "\" y1=\"" + fixed(y_row) + "\" x2=\"" + fixed(x + 16) + "\" y2=\"" + fixed(y_row) +
           "\" stroke=\"" + s.color + "\" stroke-width=\"2\"" + (s.dashed ? " stroke-dasharray=\"4 2\"" : "") +
           (s.opacity < 1 ? " stroke-opacity=\"" + fixed(s.opacity) + "\"" : "") + "/>";
    svg += "<text x=\"" + fixed(x + 19) + "\" y=\"" + fixed(y_row + 3) + "\" font-size=\"9\">" + escape_html(s.name) + "</text>";
    x += width;
  }
  const double plot_h = kHeight - kTop - kBottom;
  svg += "<rect x=\"" + fixed(kLeft) + "\" y=\"" + fixed(kTop) + "\" width=\"" + fixed(kWidth - kLeft - kRight) + "\" height=\"" +
         fixed(plot_h) + "\" fill=\"none\" stroke=\"#999\"/>";
  for (double t : y.ticks()) {
    const double py = kTop + plot_h * (1 - y.to_unit(t));
    svg += "<line x1=\"" + fixed(kLeft - 3) + "\" y1=\"" + fixed(py) + "\" x2=\"" + fixed(kWidth - kRight) + "\" y2=\"" + fixed(py) +
           "\" stroke=\"#eee\"/>";
    svg += "<text x=\"" + fixed(kLeft - 5) + "\" y=\"" + fixed(py + 3) + "\" text-anchor=\"end\" font-size=\"9\">" + number_text(t) +
           "</text>";
  }
  svg += "<text x=\"" + fixed((kLeft + kWidth - kRight) / 2) + "\" y=\"" + fixed(kHeight - 6) +
         "\" text-anchor=\"middle\" font-size=\"10\">" + escape_html(x_label) + "</text>";
  svg += "<text transform=\"translate(12," + fixed(kTop + plot_h / 2) + ") rotate(-90)\" text-anchor=\"middle\" font-size=\"10\">" +
         escape_html(y_label) + "</text>";
  return svg;
}

}  // namespace

std::string escape_html(const std::string& text) {
  std::string out;
  for (char c : text) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      default: out += c;
    }
  }
  return out;
}

std::string line_chart(const std::string& title, const std::string& x_label, const std::string& y_label,
                       const std::vector<PlotSeries>& series, bool log_y) {
  std::vector<double> xs, ys;
  for (const auto& s : series) {
    for (const auto& [px, py] : s.points) {
      xs.push_back(px);
      ys.push_back(py);
    }
  }
  const Axis y = fit_axis(ys, log_y);
  Axis x;
  x.low = xs.empty() ? 0 : *std::min_element(xs.begin(), xs.end());
  x.high = xs.empty() ? 1 : *std::max_element(xs.begin(), xs.end());
  if (x.high <= x.low) x.high = x.low + 1;
  std::string svg = frame(title, x_label, y_label, y, series);
  const double plot_w = kWidth - kLeft - kRight, plot_h = kHeight - kTop - kBottom;
  for (double t : x.ticks()) {
    const double px = kLeft + plot_w * x.to_unit(t);
    svg += "<text x=\"" + fixed(px) + "\" y=\"" + fixed(kTop + plot_h + 12) + "\" text-anchor=\"middle\" font-size=\"9\">" +
           number_text(t) + "</text>";
  }
  for (const auto& s : series) {
    std::string path;
    for (const auto& [px, py] : s.points) {
      const double value = log_y ? std::max(py, y.low) : py;
      if (!std::isfinite(value)) continue;
      path += (path.empty() ? "M" : " L") + fixed(kLeft + plot_w * x.to_unit(px)) + " " +
              fixed(kTop + plot_h * (1 - std::clamp(y.to_unit(value), 0.0, 1.0)));
    }
    if (path.empty()) continue;
    svg += "<path d=\"" + path + "\" fill=\"none\" stroke=\"" + s.color + "\" stroke-width=\"1.5\"" +
           (s.dashed ? " stroke-dasharray=\"4 2\"" : "") + (s.opacity < 1 ? " stroke-opacity=\"" + fixed(s.opacity) + "\"" : "") +
           "><title>" + escape_html(s.name) + "</title></path>";
  }
  return svg + "</svg>";
}

std::string bar_chart(const std::string& title, const std::string& y_label, const std::vector<std::string>& categories,
                      const std::vector<PlotSeries>& series, const std::vector<std::vector<double>>& values, double reference_line,
                      bool log_y) {
  std::vector<double> all;
  for (const auto& row : values) all.insert(all.end(), row.begin(), row.end());
  if (reference_line > 0) all.push_back(reference_line);
  const Axis y = fit_axis(all, log_y);
  std::string svg = frame(title, "", y_label, y, series);
  const double plot_w = kWidth - kLeft - kRight, plot_h = kHeight - kTop - kBottom;
  const double group_w = plot_w / std::max<std::size_t>(1, categories.size());
  const double bar_w = group_w * 0.8 / std::max<std::size_t>(1, series.size());
  for (std::size_t c = 0; c < categories.size(); ++c) {
    const double gx = kLeft + group_w * static_cast<double>(c);
    svg += "<text x=\"" + fixed(gx + group_w / 2) + "\" y=\"" + fixed(kTop + plot_h + 12) +
           "\" text-anchor=\"middle\" font-size=\"8\">" + escape_html(categories[c]) + "</text>";
    for (std::size_t s = 0; s < series.size(); ++s) {
      const double v = s < values.size() && c < values[s].size() && std::isfinite(values[s][c]) ? values[s][c] : 0.0;
      const double h = log_y && !(v > y.low) ? 0.0 : plot_h * std::clamp(y.to_unit(v), 0.0, 1.0);
      svg += "<rect x=\"" + fixed(gx + group_w * 0.1 + bar_w * static_cast<double>(s)) + "\" y=\"" + fixed(kTop + plot_h - h) +
             "\" width=\"" + fixed(bar_w) + "\" height=\"" + fixed(h) + "\" fill=\"" + series[s].color + "\"><title>" +
             escape_html(series[s].name + " " + categories[c] + ": " + number_text(v)) + "</title></rect>";
    }
  }
  if (reference_line > 0) {
    const double py = kTop + plot_h * (1 - y.to_unit(reference_line));
    svg += "<line x1=\"" + fixed(kLeft) + "\" y1=\"" + fixed(py) + "\" x2=\"" + fixed(kWidth - kRight) + "\" y2=\"" + fixed(py) +
           "\" stroke=\"#b00\" stroke-dasharray=\"5 3\"/>";
  }
  return svg + "</svg>";
}

}  // namespace bitparity::reports
