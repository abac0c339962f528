import type { Attributes } from '@opentelemetry/api'
import {
  type HistogramMetricData,
  MeterProvider,
  MetricReader,
  type MetricData,
} from '@opentelemetry/sdk-metrics'
import {
  InMemorySpanExporter,
  type ReadableSpan,
  SimpleSpanProcessor,
  TracerProvider,
} from '@opentelemetry/sdk-trace'

/** A metric reader the test pulls from. */
class PullMetricReader extends MetricReader {
  protected override onShutdown(): Promise<void> {
    return Promise.resolve()
  }
  protected override onForceFlush(): Promise<void> {
    return Promise.resolve()
  }
}

/** One histogram data point, flattened for assertions. */
export interface HistogramPoint {
  attributes: Attributes
  count: number
  sum: number
  boundaries: number[]
}

/** A real OpenTelemetry SDK pipeline with in-memory spans and pull metrics. */
export function createHarness(): {
  tracerProvider: TracerProvider
  meterProvider: MeterProvider
  /** The ended spans, in end order (after the processor's asynchronous export). */
  spans(): Promise<ReadableSpan[]>
  /** The one ended span with this name. */
  span(name: string): Promise<ReadableSpan>
  histogram(name: string): Promise<{ unit: string; points: HistogramPoint[] }>
} {
  const exporter = new InMemorySpanExporter()
  const tracerProvider = new TracerProvider({ spanProcessors: [new SimpleSpanProcessor({ exporter })] })
  const reader = new PullMetricReader()
  const meterProvider = new MeterProvider({ readers: [reader] })
  const spans = async (): Promise<ReadableSpan[]> => {
    await tracerProvider.forceFlush()
    return [...exporter.getFinishedSpans()]
  }
  return {
    tracerProvider,
    meterProvider,
    spans,
    async span(name) {
      const all = await spans()
      const found = all.filter((span) => span.name === name)
      if (found.length !== 1) {
        throw new Error(
          `expected one span '${name}', found ${found.length}: ${all.map((s) => s.name).join(', ')}`,
        )
      }
      return found[0]!
    },
    async histogram(name) {
      const { resourceMetrics } = await reader.collect()
      const metrics: MetricData[] = resourceMetrics.scopeMetrics.flatMap((scope) => scope.metrics)
      const metric = metrics.find((candidate) => candidate.descriptor.name === name) as
        | HistogramMetricData
        | undefined
      if (!metric) throw new Error(`no metric ${name}`)
      return {
        unit: metric.descriptor.unit,
        points: metric.dataPoints.map((point) => ({
          attributes: point.attributes,
          count: point.value.count,
          sum: point.value.sum ?? 0,
          boundaries: point.value.buckets.boundaries,
        })),
      }
    },
  }
}

/** The parent span id of a span, or undefined for a root. */
export function parentOf(span: ReadableSpan): string | undefined {
  return span.parentSpanContext?.spanId
}

/** Milliseconds of an HrTime. */
export function ms(time: [number, number]): number {
  return time[0] * 1000 + time[1] / 1e6
}
